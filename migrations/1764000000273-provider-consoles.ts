import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * servers.md "console": the simulated compute provider's console credentials. Only the SHA-256
 * of each one-time token and password is kept (hex), with the instance, the expiry and, when the
 * call named one, its step: (server, step) is unique, and a call repeated with the same step
 * replaces that step's credential (the provider cannot answer the first one again: it never kept
 * it). Expired rows are of no use and may be deleted by anyone.
 */
export class ProviderConsoles1764000000273 implements MigrationInterface {
  name = 'ProviderConsoles1764000000273';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE provider_consoles (
        console_id     text PRIMARY KEY,
        server_id      text NOT NULL,
        instance_id    text NOT NULL REFERENCES provider_instances(instance_id),
        step           text,
        token_hash     text NOT NULL UNIQUE CHECK (token_hash ~ '^[0-9a-f]{64}$'),
        password_hash  text NOT NULL CHECK (password_hash ~ '^[0-9a-f]{64}$'),
        expires_at     timestamptz NOT NULL,
        created_at     timestamptz NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX provider_consoles_step_key ON provider_consoles (server_id, step) WHERE step IS NOT NULL;
      CREATE INDEX provider_consoles_expires_idx ON provider_consoles (expires_at);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS provider_consoles`);
  }
}
