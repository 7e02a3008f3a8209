import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';

/** The built webhook-dispatcher entry point (`pnpm build` first). */
export const DISPATCHER_MAIN = join(__dirname, '../../../apps/webhook-dispatcher/dist/main.js');

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface DispatcherProcess {
  child: ChildProcess;
  port: number;
  stop: () => Promise<void>;
}

/**
 * Runs the real webhook-dispatcher as a child process on the given test environment (its schema is
 * migrated into the same database, as in production), so an API under test reaches it over Redis RPC.
 */
export async function startDispatcherProcess(env: Record<string, string>): Promise<DispatcherProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [DISPATCHER_MAIN], {
    env: {
      ...process.env,
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
      MIGRATE_ON_BOOT: 'true',
      LOG_LEVEL: 'warn',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: env.WEBHOOK_ALLOW_PRIVATE_TARGETS ?? '127.0.0.0/8',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`webhook-dispatcher exited: ${stderr}`);
    const ok = await fetch(`http://127.0.0.1:${port}/health`)
      .then((r) => r.status === 200)
      .catch(() => false);
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`webhook-dispatcher not healthy: ${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    port,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
