import { Injectable } from '@nestjs/common';
import { Clock } from '../../../shared/kernel/clock/clock';
import { purgeInBatches } from '../../../shared/jobs/periodic-job';
import { Credentials } from './credentials.port';

/** Deletes sessions past their expiry (they are refused already; revoked ones go when they expire). */
@Injectable()
export class PurgeExpiredSessions {
  constructor(
    private readonly credentials: Credentials,
    private readonly clock: Clock,
  ) {}

  /** How many sessions were deleted. */
  async execute(): Promise<number> {
    const now = this.clock.now();
    return purgeInBatches((limit) => this.credentials.purgeExpiredSessions(now, limit));
  }
}
