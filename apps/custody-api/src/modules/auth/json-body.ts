import { AppException } from '@tessera/platform';
import type { IncomingHttpHeaders } from 'node:http';

/** The one media type a custody request body may have ("Bodies are JSON"); parameters such as charset are fine. */
const JSON_MEDIA_TYPE = 'application/json';

export const NOT_JSON_MESSAGE = 'Request bodies must be JSON: send Content-Type: application/json';

/**
 * True when the request carries a body in another media type than JSON. Such a body is not acted on
 * (decision 0473): a form-encoded one was parsed into fields and created what it named, and a text/plain one
 * kept no raw bytes, so its honest signature failed as "Invalid API key or signature".
 */
export function carriesNonJsonBody(headers: IncomingHttpHeaders): boolean {
  const length = Number(headers['content-length'] ?? 0);
  const hasBody = length > 0 || headers['transfer-encoding'] !== undefined;
  if (!hasBody) return false;
  const mediaType = (headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  return mediaType !== JSON_MEDIA_TYPE;
}

export const notJson = () => new AppException(415, NOT_JSON_MESSAGE);
