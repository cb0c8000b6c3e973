import { createHmac } from 'node:crypto';
import { DomainError } from '../../../shared/kernel/errors/domain-error';

/** How far back failed logins of one account count. */
export const LOGIN_FAILURE_WINDOW_MS = 15 * 60_000;
/** Failed logins of one account (within the window) before the next attempt has to wait. */
export const LOGIN_FREE_FAILURES = 5;
/** The longest wait: the owner can always try again after at most this long (no lockout). */
export const LOGIN_MAX_DELAY_MS = 60_000;

/**
 * How long after its last failed login an account takes the next attempt, given its failures in
 * the window: none for the first LOGIN_FREE_FAILURES, then 1 s, 2 s, 4 s … doubling, at most 60 s.
 * A delay, never a lock: whoever knows the password gets in once the delay is over, while a
 * guesser gets at most one guess a minute per account, however many addresses it uses.
 */
export function loginDelayMs(failures: number): number {
  if (failures < LOGIN_FREE_FAILURES) return 0;
  return Math.min(1000 * 2 ** Math.min(failures - LOGIN_FREE_FAILURES, 16), LOGIN_MAX_DELAY_MS);
}

/** The key of emailThrottleKey when IDEMPOTENCY_SECRET is unset (never in production, where it is required). */
const DEVELOPMENT_THROTTLE_KEY = 'cloud-disk-service login throttle, development only';

/**
 * What failed logins are counted by: the normalized email (lower case, as accounts are looked up), whether or not an
 * account has it, so that the throttle answers an unknown email exactly as a known one (no
 * enumeration of accounts). Stored as an HMAC-SHA256 keyed with the server secret
 * IDEMPOTENCY_SECRET (`login:` + hex), never the email itself: a database dump does not list the
 * addresses people tried.
 */
export function emailThrottleKey(email: string, secret: string | undefined): string {
  return `login:${createHmac('sha256', secret ?? DEVELOPMENT_THROTTLE_KEY).update(`cds login throttle v1\n${email.toLowerCase()}`).digest('hex')}`;
}

/** The failed logins of one email, as every process sees them (counted in the database). */
export abstract class LoginFailures {
  /** Failures for the email key (emailThrottleKey) within the last `windowMs`, and how long ago the last one was (null: none). */
  abstract recent(emailKey: string, windowMs: number): Promise<{ count: number; lastAgoMs: number | null }>;
}

/** 429 rate_limited for an account that must wait before its next login attempt; the filter sends Retry-After. */
export class LoginThrottled extends DomainError {
  constructor(readonly retryAfterSeconds: number) {
    super('rate_limited', `Too many failed logins for this email; retry after ${retryAfterSeconds} seconds (Retry-After)`);
  }
}
