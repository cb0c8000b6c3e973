import { Quote } from '../domain/quote';

/** Quotes of organizations; lookups are scoped to one organization. */
export abstract class QuoteRepository {
  abstract create(quote: Quote): Promise<void>;
  abstract findInOrg(orgId: string, id: string): Promise<Quote | undefined>;
  /**
   * Marks the quote used by the volume a purchase creates, once: false when it was used
   * already (a conditional update, so two racing purchases cannot both use it).
   */
  abstract markUsed(id: string, volumeId: string, at: Date): Promise<boolean>;
}
