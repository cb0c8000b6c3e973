/**
 * A list, fetched page by page as it is read: `for await (const server of client.servers.list())`
 * reads every item across pages (following `next_cursor`), `pages()` the pages themselves,
 * `firstPage()` one page. Nothing is requested before it is iterated.
 */
export class Paginator<T, P = unknown> implements AsyncIterable<T> {
  constructor(
    private readonly fetchPage: (cursor: string | undefined) => Promise<P>,
    private readonly itemsMember: string,
    private readonly followsCursor: boolean,
  ) {}

  /** Every page, in order, each one requested when the previous one has been consumed. */
  async *pages(): AsyncGenerator<P, void, undefined> {
    let cursor: string | undefined;
    do {
      const page = await this.fetchPage(cursor);
      yield page;
      const next = this.followsCursor ? (page as { next_cursor?: string | null }).next_cursor : null;
      cursor = next ?? undefined;
    } while (cursor !== undefined);
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const page of this.pages()) yield* (page as Record<string, T[]>)[this.itemsMember];
  }

  /** The first page as the API answers it (its items and `next_cursor`). */
  firstPage(): Promise<P> {
    return this.fetchPage(undefined);
  }

  /** Every item, at most `max` (all of them by default). */
  async toArray(max = Infinity): Promise<T[]> {
    const out: T[] = [];
    if (max <= 0) return out;
    for await (const item of this) {
      out.push(item);
      if (out.length >= max) break;
    }
    return out;
  }
}
