import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

/**
 * Decision 0492: a queue first used while Redis hangs (the service's connection stays `ready`, nothing answers) is
 * still asking Redis for its version when the shutdown closes it. The shutdown then ends the shared connection,
 * that INFO fails with "Connection is closed.", and BullMQ emitted the failure on the queue's connection after its
 * close() had taken every listener off: Node exited 1 with the stack on stderr (the flaky "stopped while Redis is
 * hung exits 0" case of the outage suites). A real process, as the apps run the built module; the real Redis
 * (127.0.0.1:6379) is reached through a forwarder of the script's own that stops forwarding to hang it.
 */
const REDIS_PORT = Number(new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379').port || 6379);

/** The script: `closeWhileHung` runs once the forwarder has stopped forwarding, with `redis`, `jobs` (the module). */
const script = (closeWhileHung: string) => `
  const net = require('node:net');
  const Redis = require('ioredis');
  const jobs = require(${JSON.stringify(join(__dirname, '../dist/jobs'))});
  let hung = false;
  const server = net.createServer((client) => {
    const upstream = net.connect(${REDIS_PORT}, '127.0.0.1');
    client.on('data', (d) => hung || upstream.write(d));
    upstream.on('data', (d) => hung || client.write(d));
    client.on('close', () => upstream.destroy());
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  server.listen(0, '127.0.0.1', async () => {
    // No ready check: a connection opened while Redis hangs (the worker's blocking duplicate) is ready at once.
    const redis = new Redis(server.address().port, '127.0.0.1', {
      maxRetriesPerRequest: null, lazyConnect: true, enableReadyCheck: false,
    });
    redis.on('error', () => undefined);
    await redis.connect();
    await redis.ping();
    hung = true;
    ${closeWhileHung}
    redis.disconnect();
    server.close();
    console.log('closed');
  });`;

const closings = {
  'a queue first used': `
    const queues = new jobs.JobQueues(redis, { env: { QUEUE_PREFIX: 'late-errors-test' } });
    queues.queue('late-errors-test');
    await new Promise((r) => setTimeout(r, 100));
    await queues.onModuleDestroy();`,
  // JobWorkers closes its workers so (force) when Redis does not answer.
  'a worker created': `
    const worker = jobs.createWorker('late-errors-test', async () => undefined, {
      connection: redis, prefix: 'late-errors-test', autorun: false,
    });
    worker.on('error', () => undefined);
    await new Promise((r) => setTimeout(r, 100));
    await worker.close(true);`,
};

it.each(Object.entries(closings))(
  '%s while Redis hangs is closed, and its connection ended, without an unhandled error',
  (_what, closeWhileHung) => {
    const run = spawnSync(process.execPath, ['-e', script(closeWhileHung)], {
      cwd: __dirname,
      encoding: 'utf8',
      timeout: 15_000,
    });
    expect({ status: run.status, stderr: run.stderr, stdout: run.stdout }).toEqual({
      status: 0,
      stderr: '',
      stdout: 'closed\n',
    });
  },
);
