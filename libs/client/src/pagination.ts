/** A cursor page as both APIs' list endpoints answer it (`{items, nextCursor}`). */
export interface CursorPage<T> {
  items: T[];
  nextCursor: string | null;
}

/**
 * `for await (const tx of client.transactions.list({...}))` walks every page lazily: the next page is fetched
 * only when the loop reaches the end of the current one, and breaking out of the loop stops fetching.
 */
export class PageIterator<T> implements AsyncIterable<T> {
  constructor(private readonly fetchPage: (cursor: string | undefined) => Promise<CursorPage<T>>) {}

  /** Page by page, for callers that checkpoint the cursor. */
  async *pages(startCursor?: string): AsyncGenerator<CursorPage<T>> {
    let cursor = startCursor;
    for (;;) {
      const page = await this.fetchPage(cursor);
      yield page;
      if (!page.nextCursor || page.items.length === 0) return;
      cursor = page.nextCursor;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for await (const page of this.pages()) yield* page.items;
  }

  /** Collects items into an array, stopping after `limit` (default: all). */
  async toArray(limit = Infinity): Promise<T[]> {
    const out: T[] = [];
    if (limit <= 0) return out;
    for await (const item of this) {
      out.push(item);
      if (out.length >= limit) break;
    }
    return out;
  }
}
