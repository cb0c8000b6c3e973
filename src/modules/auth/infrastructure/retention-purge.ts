import { Injectable } from '@nestjs/common';
import { Db } from '../../../shared/database/transaction';
import { purgeInBatches } from '../../../shared/jobs/periodic-job';
import { Clock } from '../../../shared/kernel/clock/clock';

/** How long failed-login audit rows (anonymous, append-only otherwise) are kept. */
export const FAILED_LOGIN_RETENTION_DAYS = 90;
/** How long a quote is kept after it expired unused. */
export const EXPIRED_QUOTE_RETENTION_DAYS = 7;

/**
 * Retention of the rows anyone can make the service write and nothing reads for long: the audit
 * log's `auth.login_failed` rows older than 90 days (the login throttle reads 15 minutes of them),
 * and quotes that expired unused more than 7 days ago (a used quote stays with its purchase).
 * Deleted in batches of 1,000, each its own statement. Returns how many rows went.
 */
@Injectable()
export class RetentionPurge {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  async execute(): Promise<{ failedLogins: number; quotes: number }> {
    const now = this.clock.now();
    const day = 86_400_000;
    const loginsBefore = new Date(now.getTime() - FAILED_LOGIN_RETENTION_DAYS * day);
    const quotesBefore = new Date(now.getTime() - EXPIRED_QUOTE_RETENTION_DAYS * day);
    const failedLogins = await purgeInBatches(async (limit) =>
      (
        await this.db.exec(
          `DELETE FROM audit_log WHERE id IN (
             SELECT id FROM audit_log WHERE action = 'auth.login_failed' AND created_at < $1 LIMIT $2)`,
          [loginsBefore, limit],
        )
      ).affected,
    );
    const quotes = await purgeInBatches(async (limit) =>
      (
        await this.db.exec(
          `DELETE FROM quotes WHERE id IN (SELECT id FROM quotes WHERE used_at IS NULL AND expires_at < $1 LIMIT $2)`,
          [quotesBefore, limit],
        )
      ).affected,
    );
    return { failedLogins, quotes };
  }
}
