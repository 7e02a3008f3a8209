/**
 * How a webhook URL must be written to be stored (decision 0477), before EgressGuard checks where it points. The
 * WHATWG parser (Node's URL) forgives forms that do not read as the target they reach: it strips tabs, newlines
 * and surrounding spaces anywhere (`https://exa\nmple.com` goes to example.com), reads `\` as `/` and takes
 * `https:host` without the slashes. The configuration stored and shown by GET is the string as sent, and "the
 * same URL" (which keeps the secret) compares that string, so such a URL is refused rather than stored. Checked at
 * configuration only: an endpoint stored before keeps working.
 */
export function urlFormRefusal(raw: string): string | null {
  if ([...raw].some(isSpaceOrControl)) return 'URL must not contain spaces or control characters';
  if (raw.includes('\\')) return 'URL must not contain backslashes';
  // Another scheme is EgressGuard's "URL scheme must be https".
  if (/^https:(?!\/\/)/i.test(raw)) return 'URL must start with https://';
  let port: string;
  try {
    ({ port } = new URL(raw));
  } catch {
    return null; // EgressGuard names it
  }
  if (port === '0') return 'URL port must be 1 to 65535';
  return null;
}

/** A C0 control, a space or DEL: what the WHATWG parser strips or rejects around and inside a URL. */
const isSpaceOrControl = (ch: string) => ch.charCodeAt(0) <= 0x20 || ch.charCodeAt(0) === 0x7f;
