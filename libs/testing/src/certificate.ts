import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCertificate {
  /** PEM file of the certificate: what a client trusts (e.g. WEBHOOK_CA_FILE). */
  certFile: string;
  key: Buffer;
  cert: Buffer;
}

/**
 * A self-signed certificate made with openssl at test time, for loopback HTTPS receivers.
 * `names` are DNS names; 127.0.0.1 is always included.
 */
export function makeCertificate(names: string[] = []): TestCertificate {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-cert-'));
  const keyFile = join(dir, 'key.pem');
  const certFile = join(dir, 'cert.pem');
  const san = [...names.map((n) => `DNS:${n}`), 'IP:127.0.0.1'].join(',');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-sha256', '-days', '1']
      .concat(['-keyout', keyFile, '-out', certFile, '-subj', `/CN=${names[0] ?? '127.0.0.1'}`])
      .concat(['-addext', `subjectAltName=${san}`]),
    { stdio: 'ignore' },
  );
  return { certFile, key: readFileSync(keyFile), cert: readFileSync(certFile) };
}
