import { Injectable } from '@nestjs/common';
import { Clock } from '../../../shared/kernel/clock/clock';
import { Db } from '../../../shared/database/transaction';
import { newId } from '../../../shared/kernel/ids/ids';
import { EventOutbox } from '../application/event-outbox.port';
import { WebhookSignals } from '../application/webhook-signals.port';
import { EventRecord, eventBody } from '../domain/events';

/**
 * SQL: endpoint `e` is enabled and subscribed to the event type `type` (its `events` hold the
 * type, or `*`), as the outbox (outboxCtes) and subscriberCheckCte both test it.
 */
const subscribes = (e: string, type: string): string => `${e}.status = 'enabled' AND (${type} = ANY(${e}.events) OR '*' = ANY(${e}.events))`;

/**
 * The outbox's common table expressions, its parameters numbered from `first` (six of them,
 * outboxParams): `input` the events, `subscribed` the enabled endpoints of each event's
 * organization subscribed to its type, `events` and `deliveries` what is written (nothing when no
 * endpoint subscribes).
 */
function outboxCtes(first: number): string {
  const p = (i: number) => `$${first + i}`;
  return `input AS (
         SELECT * FROM unnest(${p(0)}::text[], ${p(1)}::text[], ${p(2)}::text[], ${p(3)}::timestamptz[], ${p(4)}::text[]) AS i(id, org_id, type, created_at, body)
       ), subscribed AS (
         SELECT i.id AS event_id, i.type, e.id AS endpoint_id
           FROM input i JOIN webhook_endpoints e ON e.org_id = i.org_id AND ${subscribes('e', 'i.type')}
       ), events AS (
         INSERT INTO webhook_events (id, org_id, type, created_at, body)
         SELECT i.id, i.org_id, i.type, i.created_at, i.body FROM input i WHERE i.id IN (SELECT event_id FROM subscribed)
         RETURNING id
       ), deliveries AS (
         INSERT INTO webhook_deliveries (id, endpoint_id, event_id, event_type, status, created_at, next_attempt_at)
         SELECT 'dlv_' || substr(s.event_id, 5, 12) || substr(md5(s.endpoint_id || s.event_id), 1, 12), s.endpoint_id, s.event_id, s.type, 'pending', ${p(5)}, ${p(5)}
           FROM subscribed s JOIN events ev ON ev.id = s.event_id
         RETURNING 1
       )`;
}

/**
 * A common table expression `wanted`: the 1-based positions of the events, given as two arrays
 * (organizations at parameter `first`, types at `first + 1`, subscriberCheckParams), that an
 * enabled endpoint of their organization subscribes to. A statement of another module carries it
 * to learn, in a round trip it makes anyway, whether recordMany has anything to write: the
 * operations engine's batch save does, so that a batch whose organizations have no endpoint
 * builds no event body and sends none (the common case), and one that has them sends only theirs.
 */
export function subscriberCheckCte(first: number): string {
  return `wanted AS (
         SELECT i.n::int AS n FROM unnest($${first}::text[], $${first + 1}::text[]) WITH ORDINALITY AS i(org_id, type, n)
          WHERE EXISTS (SELECT 1 FROM webhook_endpoints e
                         WHERE e.org_id = i.org_id AND ${subscribes('e', 'i.type')})
       )`;
}

/** The two parameters of subscriberCheckCte. */
export const subscriberCheckParams = (events: readonly Pick<EventRecord, 'orgId' | 'type'>[]): unknown[] => [events.map((e) => e.orgId), events.map((e) => e.type)];

/** The six parameters of outboxCtes for `events` (each given a new id), deliveries due `now`. */
function outboxParams(events: readonly EventRecord[], now: Date): unknown[] {
  const ids = events.map(() => newId('evt'));
  return [ids, events.map((e) => e.orgId), events.map((e) => e.type), events.map((e) => e.createdAt), events.map((e, i) => eventBody(ids[i], e.type, e.createdAt, e.data)), now];
}

/**
 * The outbox on the database, one statement for any number of events: the enabled endpoints of
 * each event's organization subscribed to its type (`events` holds the type, or `*`) are found
 * through webhook_endpoints_enabled_idx; an event is inserted only when at least one is, with one
 * pending delivery, due now, per endpoint. No subscriber: the statement writes nothing.
 */
@Injectable()
export class TypeOrmEventOutbox extends EventOutbox {
  constructor(
    private readonly db: Db,
    private readonly signals: WebhookSignals,
    private readonly clock: Clock,
  ) {
    super();
  }

  record(event: EventRecord): Promise<void> {
    return this.recordMany([event]);
  }

  async recordMany(events: readonly EventRecord[]): Promise<void> {
    if (events.length === 0) return;
    const { rows } = await this.db.exec<{ n: number }>(
      `WITH ${outboxCtes(1)}
       SELECT count(*)::int AS n FROM deliveries`,
      outboxParams(events, this.clock.now()),
      'webhooks_outbox_record',
    );
    if ((rows[0]?.n ?? 0) > 0) this.signals.announce();
  }

  override async wanted(events: readonly Pick<EventRecord, 'orgId' | 'type'>[]): Promise<number[]> {
    if (events.length === 0) return [];
    const { rows } = await this.db.exec<{ n: number }>(
      `WITH ${subscriberCheckCte(1)} SELECT n FROM wanted ORDER BY n`,
      subscriberCheckParams(events),
      'webhooks_outbox_wanted',
    );
    return rows.map((r) => r.n - 1);
  }
}
