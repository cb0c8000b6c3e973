import { MigrationInterface, QueryRunner } from 'typeorm';

/** The hourly purge of expired sessions finds them through this index instead of scanning the table. */
export class SessionsExpiryIndex1764000000091 implements MigrationInterface {
  name = 'SessionsExpiryIndex1764000000091';

  async up(q: QueryRunner): Promise<void> {
    await q.query('CREATE INDEX sessions_expires_at_idx ON sessions (expires_at)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX IF EXISTS sessions_expires_at_idx');
  }
}
