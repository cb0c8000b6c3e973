import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * terms.md "Notices": each expiry notice sent, at most one per (resource, expires_at, offset) —
 * the primary key holds across any number of processes. A renewal moves expires_at, so the
 * notices of the new term are new keys.
 */
export class ExpiryNotices1764000000341 implements MigrationInterface {
  name = 'ExpiryNotices1764000000341';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE expiry_notices (
        resource_id text NOT NULL,
        expires_at  timestamptz NOT NULL,
        offset_s    integer NOT NULL CHECK (offset_s > 0),
        org_id      text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        sent_at     timestamptz NOT NULL,
        PRIMARY KEY (resource_id, expires_at, offset_s)
      );
      CREATE INDEX expiry_notices_sent_idx ON expiry_notices (sent_at);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE expiry_notices`);
  }
}
