import { Injectable } from '@nestjs/common';
import { Db } from '../../../shared/database/transaction';
import { Clock } from '../../../shared/kernel/clock/clock';
import { LoginFailures } from '../application/login-throttle';

/**
 * Failed logins per email from the audit log's `auth.login_failed` rows (one per failure, written
 * by every process, the email's keyed hash as target_id): counted across processes without a
 * store of their own. The database stamped the rows; the application's clock (the system clock,
 * NTP-synchronised with the database's, a fixed clock the tests move) says how long ago that was,
 * so that a test decides the wait rather than the machine's load. A failure stamped after the
 * clock's now (clocks apart by a few ms) counts as just now, never as a longer wait. The
 * database stamps in microseconds: how long ago is rounded down to the millisecond, so that a
 * wait ends once it has wholly passed, never half a millisecond early.
 */
@Injectable()
export class AuditLoginFailures extends LoginFailures {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {
    super();
  }

  async recent(emailKey: string, windowMs: number): Promise<{ count: number; lastAgoMs: number | null }> {
    const [row] = await this.db.query<{ n: number; ago_ms: string | null }>(
      `SELECT count(*)::int AS n, floor(greatest(0, extract(epoch FROM $3::timestamptz - max(created_at))) * 1000)::bigint::text AS ago_ms
         FROM audit_log
        WHERE action = 'auth.login_failed' AND target_id = $1 AND created_at > $3::timestamptz - make_interval(secs => $2::double precision / 1000)`,
      [emailKey, windowMs, this.clock.now().toISOString()],
    );
    return { count: row?.n ?? 0, lastAgoMs: row?.ago_ms == null ? null : Number(row.ago_ms) };
  }
}
