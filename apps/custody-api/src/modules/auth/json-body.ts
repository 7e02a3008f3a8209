import { carriesBody, mediaTypeOf } from '@tessera/platform';
import type { IncomingHttpHeaders } from 'node:http';

/** The one media type a custody request body may have ("Bodies are JSON"); parameters such as charset are fine. */
const JSON_MEDIA_TYPE = 'application/json';

/**
 * True when the request carries a body in another media type than JSON. Such a body is not acted on
 * (decision 0473): a form-encoded one was parsed into fields and created what it named, and a text/plain one
 * kept no raw bytes, so its honest signature failed as "Invalid API key or signature". The platform refuses the
 * two media types it would parse (decision 0481); this check also covers a body without a Content-Type.
 */
export function carriesNonJsonBody(headers: IncomingHttpHeaders): boolean {
  return carriesBody(headers) && mediaTypeOf(headers) !== JSON_MEDIA_TYPE;
}
