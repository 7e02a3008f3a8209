import { makeCertificate as makeTestCertificate, type TestCertificate, until } from '@tessera/testing';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The certificate covers receiver.test, flaky.test and 127.0.0.1. */
export const makeCertificate = (): TestCertificate => makeTestCertificate(['receiver.test', 'flaky.test']);

export interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  at: number;
}

/**
 * What the receiver answers on a path: a status, an optional delay and headers; `reset` drops the connection
 * after reading the request instead of answering.
 */
export type Behaviour = {
  status: number;
  delayMs?: number;
  headers?: Record<string, string>;
  body?: string;
  reset?: boolean;
};

export class HttpsReceiver {
  readonly requests: ReceivedRequest[] = [];
  /** Requests being answered now, and the most at once since the last `resetInFlight`. */
  inFlight = 0;
  maxInFlight = 0;
  /** Requests of one `webhook-id` being answered now, and the most of any one id at once. */
  private readonly inFlightById = new Map<string, number>();
  maxInFlightOfOneId = 0;
  private readonly behaviours = new Map<string, Behaviour[]>();
  private server!: Server;
  port = 0;

  constructor(private readonly certificate: TestCertificate) {}

  /** Answers the next requests on `path` with these behaviours in order; the last one repeats. */
  on(path: string, ...behaviours: Behaviour[]): void {
    this.behaviours.set(path, behaviours);
  }

  async start(): Promise<void> {
    this.server = createServer({ key: this.certificate.key, cert: this.certificate.cert }, (req, res) => {
      this.inFlight += 1;
      this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
      const id = String(req.headers['webhook-id'] ?? '');
      const ofId = (this.inFlightById.get(id) ?? 0) + 1;
      this.inFlightById.set(id, ofId);
      this.maxInFlightOfOneId = Math.max(this.maxInFlightOfOneId, ofId);
      res.on('close', () => {
        this.inFlight -= 1;
        this.inFlightById.set(id, this.inFlightById.get(id)! - 1);
      });
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = req.url ?? '/';
        this.requests.push({
          path,
          headers: req.headers,
          rawBody: Buffer.concat(chunks).toString('utf8'),
          at: Date.now(),
        });
        const list = this.behaviours.get(path) ?? [{ status: 200 }];
        const b = list.length > 1 ? list.shift()! : list[0]!;
        const send = () => {
          if (res.destroyed) return;
          if (b.reset) return void req.socket.destroy();
          res.writeHead(b.status, b.headers ?? {});
          res.end(b.body ?? 'ok');
        };
        if (b.delayMs) setTimeout(send, b.delayMs);
        else send();
      });
    });
    this.server.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  resetInFlight(): void {
    this.maxInFlight = this.inFlight;
  }

  url(path: string, host = 'receiver.test'): string {
    return `https://${host}:${this.port}${path}`;
  }

  at(path: string): ReceivedRequest[] {
    return this.requests.filter((r) => r.path === path);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export function writeTemp(name: string, content: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'webhook-')), name);
  writeFileSync(file, content);
  return file;
}

export const waitFor = <T>(fn: () => Promise<T> | T, ok: (v: T) => boolean, timeoutMs = 10_000) =>
  until(fn, ok, { ms: timeoutMs, everyMs: 25 });
