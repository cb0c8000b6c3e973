import { IdempotencyScope, StoredResponse } from '../domain/idempotency';

export interface IdempotencyRecord {
  fingerprint: string;
  response: StoredResponse | null;
}

/**
 * What `claim` found: the key is now ours (new, or its record had expired); a live record of an
 * earlier request (whose transaction has committed: claim waits for it); or nothing any more
 * (purged between two statements: claim again).
 */
export type ClaimResult = { kind: 'claimed' } | { kind: 'existing'; record: IdempotencyRecord } | { kind: 'vanished' };

/** Idempotency records, written in the active transaction with the work they guard. */
export abstract class IdempotencyStore {
  /**
   * Takes the key for this request, or returns the record holding it. A concurrent request
   * holding the key uncommitted makes this wait on the database's unique key until it ends.
   */
  abstract claim(scope: IdempotencyScope, now: Date, expiresAt: Date): Promise<ClaimResult>;
  /** Stores the response of the claimed key. */
  abstract complete(scope: IdempotencyScope, response: StoredResponse): Promise<void>;
  /**
   * claim() and complete() in one: takes the key with its response (new key, or expired
   * record taken over in place), or returns false when a live record holds it. A concurrent
   * request holding the key uncommitted makes this wait until it ends.
   */
  abstract store(scope: IdempotencyScope, now: Date, expiresAt: Date, response: StoredResponse): Promise<boolean>;
  /** Deletes up to `limit` records expired at `now`; how many. */
  abstract purgeExpired(now: Date, limit: number): Promise<number>;
}
