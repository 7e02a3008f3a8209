import 'reflect-metadata';
import { cliFailure } from '@tessera/platform';
import { runCli } from './cli/run';

void runCli(process.argv.slice(2)).then(
  ({ code, output }) => {
    (code === 0 ? process.stdout : process.stderr).write(`${JSON.stringify(output, null, 2)}\n`);
    process.exit(code);
  },
  (err: unknown) => {
    process.stderr.write(`${JSON.stringify(cliFailure(err), null, 2)}\n`);
    process.exit(1);
  },
);
