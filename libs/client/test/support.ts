import {
  createTestEnvironment,
  DISPATCHER_MAIN,
  freePort,
  makeCertificate,
  type ServiceProcess,
  startServiceProcess as startSharedServiceProcess,
  TEST_ADMIN_TOKEN,
  type TestEnvironment,
} from '@tessera/testing';
import { once } from 'node:events';
import {
  createServer as createHttpServer,
  type IncomingHttpHeaders,
  request as httpRequest,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

const APPS = join(__dirname, '../../../apps');

/** How long an app may take to answer /health: generous, because the 2-core machine is shared. */
const BOOT_TIMEOUT_MS = 120_000;

/** libs/testing's service runner with a longer /health deadline than its default. */
const startServiceProcess = (name: string, main: string, env: Record<string, string>, port?: number) =>
  startSharedServiceProcess(name, main, env, port, BOOT_TIMEOUT_MS);

export interface Stack {
  env: TestEnvironment;
  processes: ServiceProcess[];
  custodyUrl?: string;
  verificationUrl?: string;
  receiver: Receiver;
  close: () => Promise<void>;
}

/**
 * The real apps as child processes (built dist, as `pnpm start` runs them) on a database and Redis namespace
 * of this test file: the webhook-dispatcher (trusting the receiver's test certificate), and the custody API
 * with its worker or the verification API. Each migrates its own schema at boot.
 */
export async function startStack(which: 'custody' | 'verification'): Promise<Stack> {
  const env = await createTestEnvironment([]);
  const receiver = await startReceiver();
  const processes: ServiceProcess[] = [];
  const stack: Stack = {
    env,
    processes,
    receiver,
    close: async () => {
      for (const p of processes.reverse()) await p.stop().catch(() => undefined);
      await receiver.close();
      await env.teardown();
    },
  };
  try {
    processes.push(
      await startServiceProcess('webhook-dispatcher', DISPATCHER_MAIN, {
        ...env.env,
        WEBHOOK_ALLOW_PRIVATE_TARGETS: '127.0.0.0/8',
        WEBHOOK_CA_FILE: receiver.certFile,
      }),
    );
    if (which === 'custody') {
      // The per-key limit is raised here (the suites poll); startCustodyReplica runs one with the real limit.
      const vars = {
        ...env.env,
        CHAIN_SIM_STEP_DELAY_MS: '5',
        CHAIN_SIM_BLOCK_MS: '1',
        CUSTODY_RATE_LIMIT_PER_KEY: '100000',
      };
      const api = await startServiceProcess('custody-api', join(APPS, 'custody-api/dist/main.js'), vars);
      processes.push(api);
      const workerPort = await freePort();
      processes.push(
        await startServiceProcess(
          'custody-worker',
          join(APPS, 'custody-api/dist/worker.js'),
          { ...vars, WORKER_PORT: String(workerPort) },
          workerPort,
        ),
      );
      stack.custodyUrl = `http://127.0.0.1:${api.port}`;
    } else {
      const api = await startServiceProcess(
        'verification-api',
        join(APPS, 'verification-api/dist/main.js'),
        env.env,
      );
      processes.push(api);
      stack.verificationUrl = `http://127.0.0.1:${api.port}`;
    }
    return stack;
  } catch (err) {
    await stack.close();
    throw err;
  }
}

/** One more custody-api process on the stack's database and Redis, with its own settings (e.g. a tight rate limit). */
export async function startCustodyReplica(stack: Stack, vars: Record<string, string>): Promise<string> {
  const replica = await startServiceProcess('custody-api replica', join(APPS, 'custody-api/dist/main.js'), {
    ...stack.env.env,
    ...vars,
  });
  stack.processes.push(replica);
  return `http://127.0.0.1:${replica.port}`;
}

/** The operator API of a running app (Bearer ADMIN_TOKEN). */
export async function adminPost<T = Record<string, unknown>>(
  baseUrl: string,
  path: string,
  body: unknown,
): Promise<T> {
  const res = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const data = await res.json();
  if (!res.ok) throw new Error(`POST ${path} -> ${res.status} ${JSON.stringify(data)}`);
  return data as T;
}

export interface ReceivedDelivery {
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  url: string;
  certFile: string;
  deliveries: ReceivedDelivery[];
  close: () => Promise<void>;
}

/** A partner's HTTPS endpoint on loopback with a test certificate; keeps each raw body as received. */
async function startReceiver(): Promise<Receiver> {
  const cert = makeCertificate();
  const deliveries: ReceivedDelivery[] = [];
  const server = createHttpsServer({ key: cert.key, cert: cert.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      deliveries.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200).end('ok');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    certFile: cert.certFile,
    deliveries,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export interface ProxiedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The status the client got back. */
  answered?: number;
}

export interface Fault {
  status: number;
  headers?: Record<string, string>;
  /** Forward the request to the app first (it is processed), then answer the fault instead of its answer. */
  afterForwarding?: boolean;
  /** Only requests this matches (default: every request). */
  match?: (req: ProxiedRequest) => boolean;
  /** How many requests get the fault. */
  times: number;
}

export interface FaultProxy {
  url: string;
  requests: ProxiedRequest[];
  inject: (fault: Fault) => void;
  close: () => Promise<void>;
}

/**
 * A test tool: a loopback HTTP proxy in front of a real app that answers injected faults (429, 503, 401…)
 * for the next N matching requests and forwards everything else unchanged. It records what the client sent.
 */
export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const upstream = new URL(target);
  const requests: ProxiedRequest[] = [];
  const faults: Fault[] = [];
  const forward = (req: ProxiedRequest) =>
    new Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      const out = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: upstream.host },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }),
          );
        },
      );
      out.on('error', reject);
      out.end(req.body);
    });
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const seen: ProxiedRequest = {
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(seen);
      const fault = faults.find((f) => f.times > 0 && (!f.match || f.match(seen)));
      try {
        if (fault) {
          fault.times--;
          if (fault.afterForwarding) await forward(seen);
          seen.answered = fault.status;
          res.writeHead(fault.status, fault.headers ?? {}).end();
          return;
        }
        const answer = await forward(seen);
        seen.answered = answer.status;
        const headers = { ...answer.headers };
        delete headers['transfer-encoding'];
        delete headers.connection;
        res.writeHead(answer.status, headers).end(answer.body);
      } catch (err) {
        res.writeHead(599).end(String(err));
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    inject: (fault) => faults.push(fault),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A sleep that records the requested delays and returns at once, so back-off is asserted, not waited for. */
export function recordingSleep(): { sleep: (ms: number) => Promise<void>; delays: number[] } {
  const delays: number[] = [];
  return { delays, sleep: async (ms) => void delays.push(ms) };
}

/** A logger that keeps every line. */
export function recordingLogger() {
  const lines: { message: string; details: Record<string, unknown> }[] = [];
  return {
    lines,
    warn: (message: string, details: Record<string, unknown>) => void lines.push({ message, details }),
  };
}

export async function until<T>(read: () => T | Promise<T>, done: (v: T) => boolean, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`Timed out; last value ${JSON.stringify(value).slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
