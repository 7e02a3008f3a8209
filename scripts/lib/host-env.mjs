// Host-mode settings shared by `pnpm start`, `pnpm seed` and the apps' CLIs, so that all of them talk to the
// same database, Redis prefix and operator token without anyone copying values around.
//
// - `.env` at the repository root holds the secrets of this checkout. The first `pnpm start` (or `pnpm seed`)
//   writes it with freshly generated values (mode 0600); later runs read it. The CLIs read it too
//   (`node --env-file-if-exists=../../.env dist/cli.js`). Delete it to get new secrets.
// - The process environment wins over `.env`, and `.env` wins over the derived defaults.
// - TESSERA_PORT_BASE (default 3000) moves every port, and a non-default base also gets its own database
//   (`tessera_<base>`) and queue prefix (`tessera-<base>`), so two checkouts on one machine never share state.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv } from 'node:util';

export const DEFAULT_PORT_BASE = 3000;

/** The ports of every host-mode process for a port base. */
export function hostPorts(base) {
  return {
    'verification-api': base + 1,
    'custody-api': base + 2,
    'webhook-dispatcher': base + 3,
    'media-store': base + 4,
    'custody-worker': base + 12,
  };
}

function generatedSecrets() {
  return {
    ADMIN_TOKEN: randomBytes(24).toString('hex'),
    SECRETS_MASTER_KEY: randomBytes(32).toString('base64'),
    INTERNAL_SERVICE_TOKEN: randomBytes(24).toString('hex'),
  };
}

/**
 * The settings of this checkout's host mode: `{ env, base, envFile, created }`. Writes `.env` when it is missing
 * (unless `write` is false).
 */
export function hostEnv(root, { processEnv = process.env, write = true } = {}) {
  const base = Number(processEnv.TESSERA_PORT_BASE ?? DEFAULT_PORT_BASE);
  if (!Number.isInteger(base) || base < 1024 || base > 60000) {
    throw new Error(
      `TESSERA_PORT_BASE must be an integer between 1024 and 60000, not ${processEnv.TESSERA_PORT_BASE}`,
    );
  }
  const instance = base === DEFAULT_PORT_BASE ? '' : String(base);
  const envFile = join(root, '.env');
  let fromFile = existsSync(envFile) ? parseEnv(readFileSync(envFile, 'utf8')) : undefined;
  let created = false;
  if (!fromFile && write) {
    fromFile = {
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/tessera',
      REDIS_URL: 'redis://127.0.0.1:6379',
      QUEUE_PREFIX: 'tessera',
      ...generatedSecrets(),
    };
    const lines = Object.entries(fromFile).map(([k, v]) => `${k}=${v}`);
    writeFileSync(
      envFile,
      `# Written by pnpm start for host mode (scripts/lib/host-env.mjs). Development values: never reuse them.\n${lines.join('\n')}\n`,
      { mode: 0o600 },
    );
    created = true;
  }
  const file = fromFile ?? {};
  // A second instance gets its own database and queue prefix unless they are set explicitly in the process env.
  const derived = instance
    ? {
        DATABASE_URL: `postgres://postgres@127.0.0.1:5432/tessera_${instance}`,
        QUEUE_PREFIX: `tessera-${instance}`,
      }
    : {};
  const pick = (name, fallback) => processEnv[name] ?? derived[name] ?? file[name] ?? fallback;
  const env = {
    DATABASE_URL: pick('DATABASE_URL', 'postgres://postgres@127.0.0.1:5432/tessera'),
    REDIS_URL: pick('REDIS_URL', 'redis://127.0.0.1:6379'),
    QUEUE_PREFIX: pick('QUEUE_PREFIX', 'tessera'),
    LOG_LEVEL: pick('LOG_LEVEL', 'info'),
    ADMIN_TOKEN: pick('ADMIN_TOKEN'),
    SECRETS_MASTER_KEY: pick('SECRETS_MASTER_KEY'),
    INTERNAL_SERVICE_TOKEN: pick('INTERNAL_SERVICE_TOKEN'),
  };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
  return { env, base, envFile, created };
}

/**
 * The TLS certificate of local webhook receivers (`pnpm webhooks:listen`): self-signed for localhost and
 * 127.0.0.1, made once with openssl under `.tessera/localhost-tls/`. In host mode the dispatcher trusts it
 * (WEBHOOK_CA_FILE) on top of the public roots, and may deliver to loopback (WEBHOOK_ALLOW_PRIVATE_TARGETS).
 */
export function localTls(root) {
  const dir = join(root, '.tessera/localhost-tls');
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  if (!existsSync(certFile) || !existsSync(keyFile)) {
    mkdirSync(dir, { recursive: true });
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-sha256',
        '-days',
        '825',
        '-keyout',
        keyFile,
        '-out',
        certFile,
      ].concat(['-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1']),
      { stdio: 'ignore' },
    );
  }
  return { certFile, keyFile };
}
