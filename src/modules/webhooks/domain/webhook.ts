import { EventType } from './events';

export type EndpointStatus = 'enabled' | 'disabled';
export type DisabledReason = 'manual' | 'gone' | 'failing';
export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';
export type DeliveryError = 'http_status' | 'timeout' | 'connection_error' | 'tls_error' | 'dns_error' | 'blocked_address' | 'endpoint_disabled';

export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'succeeded', 'failed'];
export const DELIVERY_ERRORS: readonly DeliveryError[] = ['http_status', 'timeout', 'connection_error', 'tls_error', 'dns_error', 'blocked_address', 'endpoint_disabled'];

/** At most this many endpoints per organization, disabled ones included. */
export const MAX_ENDPOINTS_PER_ORG = 16;
/** Deliveries of one endpoint attempted at once, over every process. */
export const MAX_IN_FLIGHT_PER_ENDPOINT = 4;

export interface WebhookEndpoint {
  id: string;
  orgId: string;
  url: string;
  events: string[];
  description: string | null;
  status: EndpointStatus;
  disabledReason: DisabledReason | null;
  failingSince: Date | null;
  secretSealed: string;
  previousSecretSealed: string | null;
  secretRotationEndsAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface WebhookDelivery {
  id: string;
  endpointId: string;
  eventId: string;
  eventType: EventType;
  status: DeliveryStatus;
  attempts: number;
  createdAt: Date;
  lastAttemptAt: Date | null;
  lastResponseStatus: number | null;
  lastError: DeliveryError | null;
  nextAttemptAt: Date | null;
  redeliveryOf: string | null;
}

/**
 * The delay before the next attempt after `failures` failed attempts (schedule[failures] seconds,
 * ±10% uniform jitter; a Retry-After may lengthen it), or null when the schedule is spent.
 */
export function nextAttemptDelayMs(schedule: readonly number[], failures: number, retryAfterS: number | null, random: () => number = Math.random): number | null {
  if (failures >= schedule.length) return null;
  const base = schedule[failures] * 1000;
  const jittered = base * (0.9 + 0.2 * random());
  return Math.round(Math.max(jittered, retryAfterS === null ? 0 : retryAfterS * 1000));
}

/** Retry-After in seconds (delta-seconds or an HTTP date), null when absent or unreadable; capped at a day. */
export function parseRetryAfter(value: string | undefined, now: Date): number | null {
  if (!value) return null;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Math.min(Number(v), 86_400);
  const at = Date.parse(v);
  if (Number.isNaN(at)) return null;
  return Math.min(Math.max(0, Math.ceil((at - now.getTime()) / 1000)), 86_400);
}
