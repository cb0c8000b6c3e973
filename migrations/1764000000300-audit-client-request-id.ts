import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An audit entry's request_id is the server's id of the request (unique per request); the
 * client's X-Request-Id, when it sent a valid one, is kept beside it in client_request_id (null
 * when none, and for system actions). Entries written before hold the id the response echoed in
 * request_id and NULL here. Adding a nullable column without a default rewrites nothing.
 */
export class AuditClientRequestId1764000000300 implements MigrationInterface {
  name = 'AuditClientRequestId1764000000300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE audit_log ADD COLUMN client_request_id text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE audit_log DROP COLUMN client_request_id`);
  }
}
