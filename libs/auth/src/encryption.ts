import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const TAG_BYTES = 16;

/**
 * Encrypts secrets and seeds at rest with AES-256-GCM under a key derived (HKDF-SHA256) from
 * SECRETS_MASTER_KEY for one purpose, so that keys for different uses never coincide.
 * Sealed form: `v1.<iv>.<tag>.<ciphertext>`, each part base64url.
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(masterKeyBase64: string, purpose: string) {
    const master = Buffer.from(masterKeyBase64, 'base64');
    if (master.length !== 32) throw new Error('SECRETS_MASTER_KEY must be base64 of 32 bytes');
    this.key = Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), `tessera:${purpose}`, 32));
  }

  seal(plaintext: string | Buffer, associatedData?: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    if (associatedData) cipher.setAAD(Buffer.from(associatedData, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return [VERSION, iv, cipher.getAuthTag(), body]
      .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
      .join('.');
  }

  open(sealed: string, associatedData?: string): Buffer {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== VERSION || !iv || !tag || body === undefined) throw new Error('Not a sealed secret');
    // The full 16-byte tag only: GCM would otherwise verify a truncated tag (4 bytes is 32 bits of integrity).
    const authTag = Buffer.from(tag, 'base64url');
    if (authTag.length !== TAG_BYTES) throw new Error('Not a sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'), {
      authTagLength: TAG_BYTES,
    });
    if (associatedData) decipher.setAAD(Buffer.from(associatedData, 'utf8'));
    decipher.setAuthTag(authTag);
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]);
  }

  openText(sealed: string, associatedData?: string): string {
    return this.open(sealed, associatedData).toString('utf8');
  }

  /** A keyed-hash pepper derived from the same master key, for secrets stored only as a hash. */
  static pepper(masterKeyBase64: string, purpose: string): Buffer {
    return Buffer.from(
      hkdfSync(
        'sha256',
        Buffer.from(masterKeyBase64, 'base64'),
        Buffer.alloc(0),
        `tessera:pepper:${purpose}`,
        32,
      ),
    );
  }
}
