import { MigrationInterface, QueryRunner } from 'typeorm';

/** The per-account login throttle counts an account's recent `auth.login_failed` rows: one index lookup. */
export class LoginFailuresIndex1764000000201 implements MigrationInterface {
  name = 'LoginFailuresIndex1764000000201';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX audit_log_login_failed_idx ON audit_log (actor_id, created_at) WHERE action = 'auth.login_failed'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX audit_log_login_failed_idx`);
  }
}
