import { EventRecord } from '../domain/events';

/**
 * The outbox of event webhooks: what other modules call, inside the transaction of the change
 * that causes the event, so that the event and its deliveries commit (or roll back) with it.
 * Writes the event and one pending delivery per enabled endpoint of the organization subscribed
 * to its type; nothing when none is (one index probe). The delivery workers are woken once the
 * transaction commits.
 */
export abstract class EventOutbox {
  /** Records one event in the active transaction. */
  abstract record(event: EventRecord): Promise<void>;
  /** record() of several events, set-based (a handful of statements whatever their number). */
  abstract recordMany(events: readonly EventRecord[]): Promise<void>;
  /**
   * The positions (0-based) of the events that an enabled endpoint of their organization
   * subscribes to, so that a batch builds the bodies of those only (recordMany would drop the
   * others). By default every position.
   */
  async wanted(events: readonly Pick<EventRecord, 'orgId' | 'type'>[]): Promise<number[]> {
    return events.map((_, i) => i);
  }
}

/** An outbox that records nothing: unit tests, and use cases built without one. */
export class NoEventOutbox extends EventOutbox {
  async record(): Promise<void> {}
  async recordMany(): Promise<void> {}
  override async wanted(): Promise<number[]> {
    return [];
  }
}
