import 'reflect-metadata';
import { runCli } from './cli/run';

void runCli(process.argv.slice(2)).then(
  ({ code, output }) => {
    (code === 0 ? process.stdout : process.stderr).write(`${JSON.stringify(output, null, 2)}\n`);
    process.exit(code);
  },
  (err: unknown) => {
    process.stderr.write(
      `${JSON.stringify({ message: err instanceof Error ? err.message : String(err) })}\n`,
    );
    process.exit(1);
  },
);
