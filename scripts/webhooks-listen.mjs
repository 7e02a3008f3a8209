#!/usr/bin/env node
// `pnpm webhooks:listen --api custody|verification --key KEY --secret SECRET`: events to localhost, as `stripe
// listen` does. It starts an HTTPS receiver on 127.0.0.1 with the local certificate that the host-mode dispatcher
// trusts (scripts/lib/host-env.mjs), registers it as the key's webhook endpoint (a new URL each run, so a fresh
// signing secret is issued and shown only to this process), and prints every event with both signature checks
// (X-Webhook-Signature and Standard Webhooks). Ctrl-C stops it; the endpoint stays registered until replaced.
//   --port N    listen on N (default: TESSERA_PORT_BASE + 20, e.g. 3020)
//   --json      print each event's full body too
// Key and secret may also come from TESSERA_CUSTODY_KEY/SECRET or TESSERA_VERIFICATION_KEY/SECRET (`pnpm seed`).
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { hostEnv, hostPorts, localTls } from './lib/host-env.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { values: opts } = parseArgs({
  options: {
    api: { type: 'string' },
    key: { type: 'string' },
    secret: { type: 'string' },
    port: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
const fail = (message) => {
  process.stderr.write(`[listen] ${message}\n`);
  process.exit(2);
};
if (opts.api !== 'custody' && opts.api !== 'verification') fail('--api custody|verification is required');
const envPrefix = opts.api === 'custody' ? 'TESSERA_CUSTODY' : 'TESSERA_VERIFICATION';
const apiKey = opts.key ?? process.env[`${envPrefix}_KEY`];
const apiSecret = opts.secret ?? process.env[`${envPrefix}_SECRET`];
if (!apiKey || !apiSecret)
  fail(`--key and --secret are required (or ${envPrefix}_KEY and ${envPrefix}_SECRET)`);

const { signRequest, verifyWebhookBody, signStandardWebhook } = await import(
  join(root, 'libs/auth/dist/index.js')
);
const host = hostEnv(root, { write: false });
const ports = hostPorts(host.base);
const apiUrl = `http://127.0.0.1:${ports[opts.api === 'custody' ? 'custody-api' : 'verification-api']}`;
const tls = localTls(root);
const say = (line) => process.stdout.write(`${line}\n`);

let signingSecret = null;

function checkSignatures(req, raw) {
  if (!signingSecret) return 'unverified (no secret)';
  const legacy = verifyWebhookBody(signingSecret, raw, String(req.headers['x-webhook-signature'] ?? ''));
  const id = String(req.headers['webhook-id'] ?? '');
  const ts = Number(req.headers['webhook-timestamp']);
  const expected = signStandardWebhook(signingSecret, id, ts, raw);
  const standard = String(req.headers['webhook-signature'] ?? '')
    .split(' ')
    .includes(expected);
  return legacy && standard
    ? 'signature ok'
    : `signature MISMATCH (x-webhook-signature ${legacy}, webhook-signature ${standard})`;
}

const server = createServer(
  { cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) },
  (req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let event = {};
      try {
        event = JSON.parse(raw.toString('utf8'));
      } catch {
        // printed as it is below
      }
      const type = event.eventType ?? event.type ?? '(unparsed)';
      say(
        `${new Date().toISOString()}  ${type}  ${req.headers['webhook-id'] ?? event.eventId ?? event.id ?? ''}  ${checkSignatures(req, raw)}`,
      );
      if (opts.json) say(JSON.stringify(event, null, 2));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}');
    });
  },
);

const port = Number(opts.port ?? host.base + 20);
await new Promise((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
const url = `https://127.0.0.1:${server.address().port}/tessera-listen/${randomBytes(6).toString('hex')}`;

async function register() {
  const body = JSON.stringify({ url });
  const path = opts.api === 'custody' ? '/webhooks/outbound' : '/v1/webhooks';
  const headers =
    opts.api === 'custody'
      ? signRequest(apiKey, apiSecret, { method: 'PUT', pathWithQuery: path, body })
      : {
          'x-api-key': apiKey,
          'x-api-secret': apiSecret,
          'x-environment': apiKey.startsWith('vk_test_') ? 'sandbox' : 'production',
        };
  const res = await fetch(`${apiUrl}${path}`, {
    method: 'PUT',
    headers: { ...headers, 'content-type': 'application/json' },
    body,
  }).catch((err) => fail(`${apiUrl}: ${err.cause?.code ?? err.message} (is pnpm start running?)`));
  const answer = await res.json().catch(() => ({}));
  if (!res.ok) fail(`PUT ${path} answered ${res.status}: ${answer.message ?? ''}`);
  signingSecret = answer.signingSecret;
}

await register();
say(`[listen] ${opts.api} events for ${apiKey} -> ${url}`);
say('[listen] ready: signatures are checked with the secret issued for this URL; Ctrl-C to stop');
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.close(() => process.exit(0)));
