import { ConfigError } from './config';
import { DependencyUnavailableError } from './boot-dependencies';

/**
 * Runs a service entry point. A bad environment or a failed boot prints one clear line to stderr and
 * exits 1, rather than hanging or dumping a stack into JSON logs.
 */
export function runMain(main: () => Promise<unknown>): void {
  main().catch((err: unknown) => {
    const message =
      err instanceof ConfigError
        ? err.message
        : err instanceof DependencyUnavailableError
          ? `Boot failed: ${err.message}`
          : `Boot failed: ${(err as Error)?.stack ?? String(err)}`;
    process.stderr.write(`${message}\n`);
    process.exit(1);
  });
}
