import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Invitations (accounts.md "Invitations"): nobody joins an organization without accepting.
 *
 * - invitations: the token is stored only as its SHA-256 (`token_hash`, unique: accepting finds it
 *   by digest); `email` lower-cased; `expires_at` = created_at + 7 days (set by the service's
 *   clock); accepted or revoked, never both. Listed newest first per organization.
 * - idempotency_records.org_id no longer references organizations: routes that act for the
 *   signed-in user rather than an organization (creating an organization, accepting an
 *   invitation) keep their Idempotency-Key records under the user's id (`usr_…`).
 */
export class Invitations1764000000260 implements MigrationInterface {
  name = 'Invitations1764000000260';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE invitations (
        id           text PRIMARY KEY,
        org_id       text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        email        text NOT NULL CHECK (email = lower(email) AND length(email) BETWEEN 1 AND 254),
        role         text NOT NULL CHECK (role IN ('owner', 'admin', 'developer', 'viewer')),
        token_hash   bytea NOT NULL CHECK (length(token_hash) = 32),
        created_by   text REFERENCES users(id) ON DELETE SET NULL,
        created_at   timestamptz NOT NULL,
        expires_at   timestamptz NOT NULL CHECK (expires_at > created_at),
        accepted_at  timestamptz,
        accepted_by  text REFERENCES users(id) ON DELETE SET NULL,
        revoked_at   timestamptz,
        CONSTRAINT invitations_token_hash_key UNIQUE (token_hash),
        CONSTRAINT invitations_one_end_check CHECK (accepted_at IS NULL OR revoked_at IS NULL)
      );
      CREATE INDEX invitations_org_created_idx ON invitations (org_id, created_at DESC, id DESC);
      ALTER TABLE idempotency_records DROP CONSTRAINT IF EXISTS idempotency_records_org_id_fkey;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DELETE FROM idempotency_records r WHERE NOT EXISTS (SELECT 1 FROM organizations o WHERE o.id = r.org_id);
      ALTER TABLE idempotency_records ADD CONSTRAINT idempotency_records_org_id_fkey FOREIGN KEY (org_id) REFERENCES organizations(id) ON DELETE CASCADE;
      DROP TABLE invitations;
    `);
  }
}
