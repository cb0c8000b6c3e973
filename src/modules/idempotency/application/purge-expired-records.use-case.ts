import { Injectable } from '@nestjs/common';
import { Clock } from '../../../shared/kernel/clock/clock';
import { IdempotencyStore } from './idempotency.port';

const BATCH = 1000;
const MAX_BATCHES = 1000;

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
    let total = 0;
    for (let i = 0; i < MAX_BATCHES; i++) {
      const n = await this.store.purgeExpired(now, BATCH);
      total += n;
      if (n < BATCH) break;
    }
    return total;
  }
}
