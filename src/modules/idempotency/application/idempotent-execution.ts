import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { DomainError } from '../../../shared/kernel/errors/domain-error';
import { IDEMPOTENCY_RETENTION_MS, IdempotencyScope, StoredResponse } from '../domain/idempotency';
import { IdempotencyStore } from './idempotency.port';

export interface IdempotentOutcome {
  response: StoredResponse;
  /** True when the response is the stored one of an earlier request with the same key. */
  replayed: boolean;
}

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
 */
@Injectable()
export class IdempotentExecution {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly store: IdempotencyStore,
    private readonly clock: Clock,
  ) {}

  async run(
    scope: IdempotencyScope | undefined,
    work: () => Promise<StoredResponse>,
    storable: (err: unknown) => StoredResponse | undefined,
  ): Promise<IdempotentOutcome> {
    if (!scope) return { response: await work(), replayed: false };
    for (let attempt = 0; attempt < 3; attempt++) {
      const outcome = await this.uow.run(async (): Promise<IdempotentOutcome | undefined> => {
        const now = this.clock.now();
        const claim = await this.store.claim(scope, now, new Date(now.getTime() + IDEMPOTENCY_RETENTION_MS));
        if (claim.kind === 'vanished') return undefined;
        if (claim.kind === 'existing') {
          if (claim.record.fingerprint !== scope.fingerprint) {
            throw new DomainError(
              'idempotency_conflict',
              'This Idempotency-Key was already used with a different request; use a new key for a new request',
            );
          }
          if (!claim.record.response) throw new Error('An idempotency record was committed without its response');
          return { response: claim.record.response, replayed: true };
        }
        let response: StoredResponse;
        try {
          response = await this.uow.savepoint(work);
        } catch (err) {
          const stored = storable(err);
          if (!stored) throw err;
          response = stored;
        }
        await this.store.complete(scope, response);
        return { response, replayed: false };
      });
      if (outcome) return outcome;
    }
    throw new Error('The idempotency record kept vanishing while it was claimed');
  }
}
