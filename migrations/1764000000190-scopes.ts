import { MigrationInterface, QueryRunner } from 'typeorm';

/** API keys may hold every scope of accounts.md and funding.md (a write scope includes its read scope; that is checked in code). */
export class Scopes1764000000190 implements MigrationInterface {
  name = 'Scopes1764000000190';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE api_keys DROP CONSTRAINT IF EXISTS api_keys_scopes_check;
      ALTER TABLE api_keys ADD CONSTRAINT api_keys_scopes_check CHECK (
        scopes <@ ARRAY['vm:read', 'vm:write', 'billing:read', 'billing:write', 'webhooks:write', 'audit:read']::text[]
        AND cardinality(scopes) > 0);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE api_keys DROP CONSTRAINT api_keys_scopes_check;
      ALTER TABLE api_keys ADD CONSTRAINT api_keys_scopes_check CHECK (scopes <@ ARRAY['vm:read', 'vm:write']::text[] AND cardinality(scopes) > 0);
    `);
  }
}
