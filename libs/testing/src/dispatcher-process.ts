import { join } from 'node:path';
import { type ServiceProcess, startServiceProcess } from './service-process';

/** The built webhook-dispatcher entry point (`pnpm build` first). */
export const DISPATCHER_MAIN = join(__dirname, '../../../apps/webhook-dispatcher/dist/main.js');

export type DispatcherProcess = ServiceProcess;

/**
 * Runs the real webhook-dispatcher as a child process on the given test environment (its schema is
 * migrated into the same database, as in production), so an API under test reaches it over Redis RPC.
 */
export function startDispatcherProcess(env: Record<string, string>): Promise<DispatcherProcess> {
  return startServiceProcess('webhook-dispatcher', DISPATCHER_MAIN, {
    ...env,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: env.WEBHOOK_ALLOW_PRIVATE_TARGETS ?? '127.0.0.0/8',
  });
}
