/**
 * The event types an endpoint may subscribe to, and the shape of their `data`:
 *
 * - `operation.succeeded`, `operation.failed`: an Operation (every type), as GET /v1/operations/{id} returns it.
 * - `volume.deleted`: a Volume as GET /v1/volumes/{id} returns it (every move to `deleted`, failed purchases too).
 * - `wallet.top_up.succeeded`, `wallet.top_up.failed`, `wallet.top_up.expired`, `wallet.top_up.refunded` (a refund debited the wallet): a top-up as GET /v1/wallet/top-ups/{id} returns it.
 * - `wallet.credited`: a wallet transaction as GET /v1/wallet/transactions lists it (every credit).
 * - `server.deleted`: a Server as GET /v1/servers/{id} returns it (every move to `deleted`).
 * - `server.suspended`, `volume.suspended`: the Server or Volume as its GET returns it when its term ended and it was suspended (terms.md).
 * - `server.resumed`, `volume.resumed`: the Server or Volume as its GET returns it once a renewal of it while suspended succeeded.
 * - `server.expiring`, `volume.expiring`: `{id, name, expires_at, days_left, auto_renew}`, an expiry notice (terms.md "Notices").
 * - `server.auto_renew_failed`, `volume.auto_renew_failed`: the Server or Volume as its GET returns it (its `auto_renew.last_attempt` the failed one) when an automatic renewal could not be paid.
 * - `snapshot.deleted`: a Snapshot as GET /v1/snapshots/{id} returns it (every move to `deleted`; its `deleted_reason` says why: customer, expired, purchase_failed).
 * - `image.deleted`: an Image as GET /v1/images/{id} returns it (every move to `deleted`; its `deleted_reason` says why: customer, expired, purchase_failed).
 * - `ping` (POST /v1/webhook-endpoints/{id}/test only, never subscribed): `{endpoint_id}`.
 */
export const EVENT_TYPES = [
  'operation.succeeded',
  'operation.failed',
  'volume.deleted',
  'wallet.top_up.succeeded',
  'wallet.top_up.failed',
  'wallet.top_up.expired',
  'wallet.top_up.refunded',
  'wallet.credited',
  'server.deleted',
  'server.suspended',
  'volume.suspended',
  'server.resumed',
  'volume.resumed',
  'server.expiring',
  'volume.expiring',
  'server.auto_renew_failed',
  'volume.auto_renew_failed',
  'snapshot.deleted',
  'image.deleted',
  'reserved_ip.released',
] as const;

export type SubscribableEventType = (typeof EVENT_TYPES)[number];
export type EventType = SubscribableEventType | 'ping';

/** Every type, future ones too. */
export const ALL_EVENTS = '*';

export type EventData = { [key: string]: unknown };

/** A change to announce, recorded in the transaction that makes it. */
export interface EventRecord {
  orgId: string;
  type: EventType;
  /** The change's own timestamp. */
  createdAt: Date;
  /** The object as its GET returns it at commit. */
  data: EventData;
}

/** The body sent, compact JSON in this member order: `{"id","type","created_at","data"}`. */
export function eventBody(id: string, type: EventType, createdAt: Date, data: EventData): string {
  return JSON.stringify({ id, type, created_at: createdAt.toISOString(), data });
}

export function isSubscribableEventType(value: unknown): value is SubscribableEventType {
  return typeof value === 'string' && (EVENT_TYPES as readonly string[]).includes(value);
}
