import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * wallet_ledger's BEFORE INSERT trigger (migration 1764000000240) now runs only for a row
 * inserted without a `seq`. The hot writers (the acceptance's hold, the workers' settlements)
 * compute each row's public id, seq, created_at and after-values in their own statement,
 * set-based: they take the organization's wallet_heads row themselves (once per statement and
 * organization, after the balance rows, the lock order of every writer) and derive the
 * after-values from the locked balance rows, instead of one trigger call (a head upsert and a
 * probe of the previous row) per row. Every other writer (credits, purchases' holds, single
 * settlements) still leaves them to the trigger; both ways give the same rows. The WHEN clause is
 * evaluated without calling the function.
 */
export class WalletLedgerPositionsSetBased1764000000301 implements MigrationInterface {
  name = 'WalletLedgerPositionsSetBased1764000000301';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TRIGGER wallet_ledger_position ON wallet_ledger;
      CREATE TRIGGER wallet_ledger_position BEFORE INSERT ON wallet_ledger
        FOR EACH ROW WHEN (NEW.seq IS NULL) EXECUTE FUNCTION wallet_ledger_position();
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TRIGGER wallet_ledger_position ON wallet_ledger;
      CREATE TRIGGER wallet_ledger_position BEFORE INSERT ON wallet_ledger
        FOR EACH ROW EXECUTE FUNCTION wallet_ledger_position();
    `);
  }
}
