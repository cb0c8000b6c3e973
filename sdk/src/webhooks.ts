import { createHmac, timingSafeEqual } from 'node:crypto';
import { WebhookVerificationError } from './errors.js';
import type { WebhookEventType } from './generated/api.js';
import type { Operation, Server, TopUp, Volume, WalletTransaction } from './generated/schema.js';

/** `data` of each event type: the object as its GET returns it at the moment of the change. */
export interface WebhookEventData {
  'operation.succeeded': Operation;
  'operation.failed': Operation;
  'volume.deleted': Volume;
  'wallet.top_up.succeeded': TopUp;
  'wallet.top_up.failed': TopUp;
  'wallet.top_up.expired': TopUp;
  'wallet.credited': WalletTransaction;
  'server.deleted': Server;
  ping: { endpoint_id: string };
}

/** A delivered event, typed by its `type`: `if (event.type === 'server.deleted') event.data.name`. */
export type WebhookEvent = {
  [T in WebhookEventType]: {
    /** The event's id, also the `webhook-id` header: deduplicate on it. */
    id: string;
    type: T;
    created_at: string;
    data: T extends keyof WebhookEventData ? WebhookEventData[T] : unknown;
  };
}[WebhookEventType];

export interface VerifyOptions {
  /** How far (seconds) the `webhook-timestamp` may be from now; 300 by default. */
  toleranceSeconds?: number;
  /** The time to judge the timestamp by (tests); now by default. */
  now?: Date;
}

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderBag, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const bag = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(bag).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : bag[key];
  return Array.isArray(value) ? value.join(' ') : value;
}

/**
 * Verifies a webhook delivery (Standard Webhooks v1) and returns its event, typed by type; throws a
 * `WebhookVerificationError` when the signature or the timestamp does not hold.
 *
 * - `payload`: the raw body as received (a string or bytes), before any JSON parsing;
 * - `headers`: the request's (`webhook-id`, `webhook-timestamp`, `webhook-signature`);
 * - `secret`: the endpoint's `whsec_…` secret, or several: during a rotation pass the new and the
 *   old one, and a delivery signed by either is accepted.
 */
export function verify(payload: string | Uint8Array, headers: HeaderBag, secret: string | readonly string[], options: VerifyOptions = {}): WebhookEvent {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError('Missing webhook-id, webhook-timestamp or webhook-signature');
  const seconds = Number(timestamp);
  const now = (options.now ?? new Date()).getTime() / 1000;
  if (!/^\d+$/.test(timestamp) || Math.abs(now - seconds) > (options.toleranceSeconds ?? 300)) {
    throw new WebhookVerificationError('The webhook-timestamp is too far from now (a replayed or delayed delivery)');
  }
  const body = typeof payload === 'string' ? payload : Buffer.from(payload).toString('utf8');
  const given = signatures
    .split(' ')
    .map((s) => s.split(','))
    .filter(([version, value]) => version === 'v1' && value)
    .map(([, value]) => Buffer.from(value, 'base64'));
  const secrets = typeof secret === 'string' ? [secret] : secret;
  if (secrets.length === 0) throw new TypeError('verify needs at least one secret');
  const valid = secrets.some((s) => {
    const key = Buffer.from(s.startsWith('whsec_') ? s.slice('whsec_'.length) : s, 'base64');
    const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest();
    return given.some((g) => g.length === expected.length && timingSafeEqual(g, expected));
  });
  if (!valid) throw new WebhookVerificationError('No signature of the delivery matches the secret');
  try {
    return JSON.parse(body) as WebhookEvent;
  } catch {
    throw new WebhookVerificationError('The signed body is not JSON');
  }
}

/** `client.webhooks`: verifying deliveries (no request is made). */
export const webhooks = { verify };
