import { QuoteRepository } from '../application/quotes.port';
import { Quote } from '../domain/quote';

/** Quotes in memory, for unit tests. */
export class InMemoryQuoteRepository extends QuoteRepository {
  readonly quotes = new Map<string, Quote & { volumeId: string | null }>();

  async create(quote: Quote): Promise<void> {
    if (this.quotes.has(quote.id)) throw new Error(`Quote ${quote.id} exists already`);
    this.quotes.set(quote.id, { ...quote, volumeId: null });
  }

  async findInOrg(orgId: string, id: string): Promise<Quote | undefined> {
    const q = this.quotes.get(id);
    if (!q || q.orgId !== orgId) return undefined;
    const { volumeId: _volumeId, ...quote } = q;
    return quote;
  }

  async markUsed(id: string, volumeId: string, at: Date): Promise<boolean> {
    const q = this.quotes.get(id);
    if (!q || q.usedAt) return false;
    this.quotes.set(id, { ...q, usedAt: at, volumeId });
    return true;
  }
}
