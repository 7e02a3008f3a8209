import { connect } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  body: unknown;
}

/**
 * Sends one request byte for byte on a fresh socket (no client-side encoding or validation, so malformed
 * URLs, NUL bytes and oversized headers reach the server as written) and reads the answer until close.
 */
export function rawRequest(
  port: number,
  opts: { method?: string; path: string; headers?: Record<string, string>; body?: string | Buffer },
): Promise<RawResponse> {
  const body = opts.body === undefined ? undefined : Buffer.from(opts.body);
  const headers: Record<string, string> = {
    host: `127.0.0.1:${port}`,
    connection: 'close',
    ...(body ? { 'content-length': String(body.length) } : {}),
    ...opts.headers,
  };
  const head =
    `${opts.method ?? 'GET'} ${opts.path} HTTP/1.1\r\n` +
    Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('') +
    '\r\n';
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(new Error('raw request timed out')), 10_000);
    socket.on('connect', () => {
      socket.write(Buffer.concat([Buffer.from(head, 'latin1'), body ?? Buffer.alloc(0)]));
    });
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', (err) => {
      // The server may close right after answering (431, 400); keep what was read.
      if (chunks.length === 0) {
        clearTimeout(timer);
        reject(err);
      }
    });
    socket.on('close', () => {
      clearTimeout(timer);
      const raw = Buffer.concat(chunks).toString('utf8');
      const split = raw.indexOf('\r\n\r\n');
      const [statusLine = '', ...lines] = raw.slice(0, split).split('\r\n');
      const status = Number(statusLine.split(' ')[1]);
      if (!status) return reject(new Error(`no HTTP answer: ${JSON.stringify(raw.slice(0, 200))}`));
      const parsed: Record<string, string> = {};
      for (const line of lines) {
        const i = line.indexOf(':');
        parsed[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
      }
      let text = raw.slice(split + 4);
      if (parsed['transfer-encoding'] === 'chunked') text = dechunk(text);
      let json: unknown;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      resolve({ status, headers: parsed, text, body: json });
    });
  });
}

function dechunk(text: string): string {
  let out = '';
  let rest = text;
  for (;;) {
    const eol = rest.indexOf('\r\n');
    if (eol < 0) return out;
    const size = parseInt(rest.slice(0, eol), 16);
    if (!size) return out;
    out += rest.slice(eol + 2, eol + 2 + size);
    rest = rest.slice(eol + 2 + size + 2);
  }
}
