import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The SSH keys a server was given at purchase, by id (the keys themselves stay in ssh_keys; a key
 * deleted later keeps its id here: it was injected). Seeded servers and those bought before: none.
 */
export class ServerSshKeyIds1764000000360 implements MigrationInterface {
  name = 'ServerSshKeyIds1764000000360';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE servers ADD COLUMN ssh_key_ids text[] NOT NULL DEFAULT '{}'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE servers DROP COLUMN ssh_key_ids`);
  }
}
