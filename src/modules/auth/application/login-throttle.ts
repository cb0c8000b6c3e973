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

/** The failed logins of one account, as every process sees them (counted in the database). */
export abstract class LoginFailures {
  /** Failures of the user within the last `windowMs`, and how long ago the last one was (null: none). */
  abstract recent(userId: string, windowMs: number): Promise<{ count: number; lastAgoMs: number | null }>;
}

/** 429 rate_limited for an account that must wait before its next login attempt; the filter sends Retry-After. */
export class LoginThrottled extends DomainError {
  constructor(readonly retryAfterSeconds: number) {
    super('rate_limited', `Too many failed logins for this account; retry after ${retryAfterSeconds} seconds (Retry-After)`);
  }
}
