import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The audit log stays append-only, with one exception: the retention job may delete
 * `auth.login_failed` rows (no organization) older than 90 days. Nothing else is ever updated,
 * deleted or truncated.
 */
export class FailedLoginRetention1764000000202 implements MigrationInterface {
  name = 'FailedLoginRetention1764000000202';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        IF TG_OP = 'DELETE' AND OLD.action = 'auth.login_failed' AND OLD.org_id IS NULL
           AND OLD.created_at < now() - interval '90 days' THEN
          RETURN OLD;
        END IF;
        RAISE EXCEPTION 'audit_log is append-only' USING ERRCODE = 'restrict_violation';
      END
      $fn$;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        RAISE EXCEPTION 'audit_log is append-only' USING ERRCODE = 'restrict_violation';
      END
      $fn$;
    `);
  }
}
