/** An answer outside 2xx, after the client's retries (if any) were spent. */
export class TesseraApiError extends Error {
  override readonly name = 'TesseraApiError';

  constructor(
    /** HTTP status of the last answer. */
    readonly status: number,
    message: string,
    /** The parsed error body (`{message}` on verification, `{message, errors?}` on custody), or the raw text. */
    readonly body: unknown,
    /** Field problems (custody `errors` member), when the answer had them. */
    readonly errors: Record<string, string[]> | undefined,
    /** `X-Request-Id` of the last answer, to quote to support. */
    readonly requestId: string | undefined,
    /** How many HTTP tries this logical call made. */
    readonly attempts: number,
  ) {
    super(message);
  }
}

/** No HTTP answer at all (connection refused or reset, DNS failure, timeout), after the retries were spent. */
export class TesseraNetworkError extends Error {
  override readonly name = 'TesseraNetworkError';

  constructor(
    message: string,
    readonly attempts: number,
    override readonly cause: unknown,
  ) {
    super(message);
  }
}
