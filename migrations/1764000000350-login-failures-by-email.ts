import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The login throttle counts recent `auth.login_failed` rows per email (its keyed hash, in
 * target_id), whether or not an account has it: one index lookup. The per-account index it
 * replaces is dropped.
 */
export class LoginFailuresByEmail1764000000350 implements MigrationInterface {
  name = 'LoginFailuresByEmail1764000000350';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX audit_log_login_failed_email_idx ON audit_log (target_id, created_at) WHERE action = 'auth.login_failed'`);
    await q.query(`DROP INDEX audit_log_login_failed_idx`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX audit_log_login_failed_idx ON audit_log (actor_id, created_at) WHERE action = 'auth.login_failed'`);
    await q.query(`DROP INDEX audit_log_login_failed_email_idx`);
  }
}
