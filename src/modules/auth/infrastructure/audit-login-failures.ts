import { Injectable } from '@nestjs/common';
import { Db } from '../../../shared/database/transaction';
import { LoginFailures } from '../application/login-throttle';

/**
 * Failed logins per email from the audit log's `auth.login_failed` rows (one per failure, written
 * by every process, the email's keyed hash as target_id): counted across processes without a store of their own. The database's clock
 * measures the window, as it stamped the rows.
 */
@Injectable()
export class AuditLoginFailures extends LoginFailures {
  constructor(private readonly db: Db) {
    super();
  }

  async recent(emailKey: string, windowMs: number): Promise<{ count: number; lastAgoMs: number | null }> {
    const [row] = await this.db.query<{ n: number; ago_ms: string | null }>(
      `SELECT count(*)::int AS n, (extract(epoch FROM now() - max(created_at)) * 1000)::bigint::text AS ago_ms
         FROM audit_log
        WHERE action = 'auth.login_failed' AND target_id = $1 AND created_at > now() - make_interval(secs => $2::double precision / 1000)`,
      [emailKey, windowMs],
    );
    return { count: row?.n ?? 0, lastAgoMs: row?.ago_ms == null ? null : Number(row.ago_ms) };
  }
}
