import { ServerQuote } from '../domain/server-quote';

/** Server quotes (the quotes table, kind server); lookups are scoped to one organization. */
export abstract class ServerQuotes {
  abstract create(quote: ServerQuote): Promise<void>;
  /** The quote of either kind (a disk quote only as its kind, for the 400 naming quote_id). */
  abstract findAnyInOrg(orgId: string, id: string): Promise<ServerQuote | { kind: 'volume'; id: string } | undefined>;
  /** Marks the quote used by the server a purchase creates, once (false when it was used already). */
  abstract markUsedByServer(id: string, serverId: string, at: Date): Promise<boolean>;
}
