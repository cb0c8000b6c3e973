import { Injectable, Optional } from '@nestjs/common';
import { Settings } from '../../../shared/config/settings';
import { UnitOfWork, endedByDeadlock } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { DomainError } from '../../../shared/kernel/errors/domain-error';
import { IDEMPOTENCY_RETENTION_MS, IdempotencyScope, StoredResponse, callerBound, keyedScope } from '../domain/idempotency';
import { openBody, sealBody } from '../domain/sealed-response';
import { IdempotencyStore } from './idempotency.port';

export interface IdempotentOutcome {
  response: StoredResponse;
  /** True when the response is the stored one of an earlier request with the same key. */
  replayed: boolean;
}

export interface IdempotentOptions {
  /**
   * The answer holds a secret (a new API key's or invitation's token, a console credential, a
   * webhook secret): stored encrypted under a key derived from the raw Idempotency-Key and
   * IDEMPOTENCY_SECRET (domain/sealed-response.ts), decrypted on replay; and it replays only to
   * the caller who made it (scope.caller, bound into the record's fingerprint): the same key
   * from another user or API key of the organization is 409 idempotency_conflict.
   */
  seal?: boolean;
  /**
   * The work may run before the key is known to be free, and without a savepoint: every effect
   * of it is in the transaction (a rollback undoes it all), and it writes nothing before it
   * throws a storable error (its writes are its last statement, all or nothing). See run().
   * `'success'`: only a success is stored that way; any error of the work rolls the attempt back
   * (nothing of it kept) and the request runs the careful way, so work that writes before it may
   * throw a storable error (a purchase: its row, then a 402) stores that error with nothing else.
   */
  optimistic?: boolean | 'success';
}

/** The optimistic attempt gives way to the careful one (the key was taken, or the answer could not be stored). */
class RunCarefully extends Error {}

/**
 * Runs a request's work at most once per Idempotency-Key, for any endpoint:
 *
 * - In one transaction: claim the key (INSERT … ON CONFLICT on the record's primary key: a
 *   concurrent identical request waits there until the first commits, then replays it), run the
 *   work in a savepoint, store its response. A crash loses both or neither.
 * - An error that `storable` turns into a response (404, 409 invalid_state, 402) rolls the work
 *   back to the savepoint and is stored like a success; anything else (a 5xx) rolls the whole
 *   transaction back, the key included, so a retry executes anew.
 * - The same key with another fingerprint: 409 idempotency_conflict. Expired records count as absent.
 *   The stored fingerprint is keyed with IDEMPOTENCY_SECRET (keyedScope); a record stored unkeyed
 *   (before that) still compares.
 * - The store keys records by the SHA-256 of the Idempotency-Key, never the key itself; with
 *   `seal` the stored body is encrypted under the raw key (IdempotentOptions).
 * - `optimistic` (IdempotentOptions): the work runs first, without a savepoint, and its answer
 *   is stored with the key in one statement (IdempotencyStore.store: two round trips and a
 *   record version fewer). If the key is taken (an earlier request's live record, or a
 *   concurrent one's, which that statement waits for), or the answer cannot be stored (a failed
 *   statement aborted the transaction), the transaction is rolled back, nothing of the work is
 *   kept, and the request runs the careful way above: a repeat is replayed (or answered 409
 *   idempotency_conflict), anything else executed again in a savepoint. With `optimistic:
 *   'success'` an error of the work does the same (its answer then comes from the careful run).
 */
@Injectable()
export class IdempotentExecution {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly store: IdempotencyStore,
    private readonly clock: Clock,
    @Optional() private readonly settings?: Settings,
  ) {}

  async run(
    scope: IdempotencyScope | undefined,
    work: () => Promise<StoredResponse>,
    storable: (err: unknown) => StoredResponse | undefined,
    options: IdempotentOptions = {},
  ): Promise<IdempotentOutcome> {
    const secret = this.settings?.idempotencySecret;
    // Without a key the work still runs in one transaction: a lock it takes (the organization's,
    // before counting against a limit) holds until its writes commit.
    if (!scope) return { response: await this.uow.run(work), replayed: false };
    scope = keyedScope(scope, secret);
    if (options.seal) scope = callerBound(scope);
    const sealed = (response: StoredResponse): StoredResponse => (options.seal ? { ...response, body: sealBody(response.body, scope, secret) } : response);
    if (options.optimistic) {
      try {
        return await this.uow.run(async (): Promise<IdempotentOutcome> => {
          const now = this.clock.now();
          let response: StoredResponse;
          try {
            response = await work();
          } catch (err) {
            if (options.optimistic === 'success') throw new RunCarefully();
            const stored = storable(err);
            if (!stored) throw err;
            response = stored;
          }
          let stored: boolean;
          try {
            stored = await this.store.store(scope, now, new Date(now.getTime() + IDEMPOTENCY_RETENTION_MS), sealed(response));
          } catch {
            throw new RunCarefully();
          }
          if (!stored) throw new RunCarefully();
          return { response, replayed: false };
        });
      } catch (err) {
        if (!(err instanceof RunCarefully)) throw err;
      }
    }
    for (let attempt = 0; attempt < 3; attempt++) {
      const outcome = await this.uow.run(async (): Promise<IdempotentOutcome | undefined> => {
        const now = this.clock.now();
        const claim = await this.store.claim(scope, now, new Date(now.getTime() + IDEMPOTENCY_RETENTION_MS));
        if (claim.kind === 'vanished') return undefined;
        if (claim.kind === 'existing') {
          // A record stored before fingerprints were keyed holds the unkeyed one (for the 24 hours it lives).
          const legacy = claim.record.fingerprint !== scope.fingerprint && claim.record.fingerprint === scope.legacyFingerprint;
          if (claim.record.fingerprint !== scope.fingerprint && !legacy) {
            throw new DomainError(
              'idempotency_conflict',
              options.seal
                ? 'This Idempotency-Key was already used with a different request, or by another caller (an answer holding a secret replays only to the caller who made it); use a new key for a new request'
                : 'This Idempotency-Key was already used with a different request; use a new key for a new request',
            );
          }
          if (!claim.record.response) throw new Error('An idempotency record was committed without its response');
          const stored = claim.record.response;
          const sealedUnder = legacy ? { ...scope, fingerprint: scope.legacyFingerprint! } : scope;
          return { response: { ...stored, body: openBody(stored.body, sealedUnder, secret) }, replayed: true };
        }
        let response: StoredResponse;
        try {
          response = await this.uow.savepoint(work);
        } catch (err) {
          const stored = storable(err);
          if (!stored) throw err;
          response = stored;
        }
        await this.store.complete(scope, sealed(response));
        return { response, replayed: false };
      }).catch((err: unknown) => {
        // A retry of the same request racing its first attempt: the optimistic one locked the
        // resource and waits to store its record under the key this one claimed, while this one
        // waits for the resource. PostgreSQL ends one of them; when it is this one, the other
        // commits and the next attempt finds its record (a replay), instead of a 500.
        if (endedByDeadlock(err) && attempt < 2) return undefined;
        throw err;
      });
      if (outcome) return outcome;
    }
    throw new Error('The idempotency record kept vanishing (or its claim kept deadlocking) while it was claimed');
  }
}
