import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Idempotency records keep the SHA-256 of the Idempotency-Key (hex), never the key: the raw key
 * is what a stored answer holding a secret (a new API key's token) is encrypted under
 * (src/modules/idempotency/domain/sealed-response.ts), so a dump of this table must not hold it.
 * The column is renamed to say so, and a CHECK refuses anything but a digest. Records of the last
 * 24 hours are converted in place, so a retry across the upgrade still replays.
 */
export class IdempotencyKeyDigests1764000000171 implements MigrationInterface {
  name = 'IdempotencyKeyDigests1764000000171';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE idempotency_records DROP CONSTRAINT idempotency_records_key_check;
      UPDATE idempotency_records SET key = encode(sha256(convert_to(key, 'UTF8')), 'hex');
      ALTER TABLE idempotency_records RENAME COLUMN key TO key_sha256;
      ALTER TABLE idempotency_records ADD CONSTRAINT idempotency_records_key_sha256_check CHECK (key_sha256 ~ '^[0-9a-f]{64}$');
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    // The keys cannot be recovered from their digests: the records (a 24-hour replay cache) go.
    await q.query(`
      DELETE FROM idempotency_records;
      ALTER TABLE idempotency_records DROP CONSTRAINT idempotency_records_key_sha256_check;
      ALTER TABLE idempotency_records RENAME COLUMN key_sha256 TO key;
      ALTER TABLE idempotency_records ADD CONSTRAINT idempotency_records_key_check CHECK (length(key) BETWEEN 1 AND 255);
    `);
  }
}
