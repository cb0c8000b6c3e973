import { ClaimResult, IdempotencyRecord, IdempotencyStore } from '../application/idempotency.port';
import { IdempotencyScope, StoredResponse } from '../domain/idempotency';

/** Idempotency records in memory (no concurrency: unit tests run one request at a time). */
export class InMemoryIdempotencyStore extends IdempotencyStore {
  readonly records = new Map<string, IdempotencyRecord & { expiresAt: Date }>();

  private static id(scope: IdempotencyScope): string {
    return `${scope.orgId}\u0000${scope.keyDigest}`;
  }

  async claim(scope: IdempotencyScope, now: Date, expiresAt: Date): Promise<ClaimResult> {
    const existing = this.records.get(InMemoryIdempotencyStore.id(scope));
    if (existing && existing.expiresAt.getTime() > now.getTime()) {
      return { kind: 'existing', record: { fingerprint: existing.fingerprint, response: existing.response } };
    }
    this.records.set(InMemoryIdempotencyStore.id(scope), { fingerprint: scope.fingerprint, response: null, expiresAt });
    return { kind: 'claimed' };
  }

  async complete(scope: IdempotencyScope, response: StoredResponse): Promise<void> {
    const r = this.records.get(InMemoryIdempotencyStore.id(scope));
    if (!r) throw new Error('The idempotency record to complete does not exist');
    r.response = response;
  }

  async store(scope: IdempotencyScope, now: Date, expiresAt: Date, response: StoredResponse): Promise<boolean> {
    const existing = this.records.get(InMemoryIdempotencyStore.id(scope));
    if (existing && existing.expiresAt.getTime() > now.getTime()) return false;
    this.records.set(InMemoryIdempotencyStore.id(scope), { fingerprint: scope.fingerprint, response, expiresAt });
    return true;
  }

  async purgeExpired(now: Date, limit: number): Promise<number> {
    let n = 0;
    for (const [k, r] of this.records) {
      if (n >= limit) break;
      if (r.expiresAt.getTime() <= now.getTime()) {
        this.records.delete(k);
        n++;
      }
    }
    return n;
  }
}
