import { Injectable } from '@nestjs/common';
import { Clock } from '../../../shared/kernel/clock/clock';
import { purgeInBatches } from '../../../shared/jobs/periodic-job';
import { IdempotencyStore } from './idempotency.port';

/** Deletes idempotency records past their 24 hours (they already count as absent). */
@Injectable()
export class PurgeExpiredIdempotencyRecords {
  constructor(
    private readonly store: IdempotencyStore,
    private readonly clock: Clock,
  ) {}

  /** How many records were deleted. */
  async execute(): Promise<number> {
    const now = this.clock.now();
    return purgeInBatches((limit) => this.store.purgeExpired(now, limit));
  }
}
