import { Injectable } from '@nestjs/common';
import { Db } from '../../../shared/database/transaction';
import { CURRENCIES, Currency, Money } from '../../../shared/kernel/money/money';
import { AdjustmentInput, Balance, Credit, DebitRefused, HoldResult, Settlement, WalletLedger } from '../application/wallet.port';
import { WalletLedgerRow, toTransaction } from './typeorm-wallet-history';

interface BalanceRow {
  currency: Currency;
  available: string;
  reserved: string;
}

/**
 * The columns of a ledger row inserted with its position already computed (public id, seq,
 * created_at, after-values): wallet_ledger's trigger (migration 1764000000301) computes them only
 * for a row inserted without a seq. A statement inserting rows this way takes the organization's
 * wallet_heads row itself, after locking the balance rows (the lock order of every writer).
 */
export const LEDGER_POSITIONED_COLUMNS = 'org_id, currency, kind, amount, operation_id, memo, public_id, seq, created_at, available_after, reserved_after';

/** A new public id of a ledger row, as the trigger makes it. */
export const NEW_LEDGER_PUBLIC_ID = "'wtx_' || replace(gen_random_uuid()::text, '-', '')";

export const toBalance = (r: BalanceRow): Balance => ({
  currency: r.currency,
  available: Money.ofMinor(r.currency, BigInt(r.available)),
  reserved: Money.ofMinor(r.currency, BigInt(r.reserved)),
});

@Injectable()
export class TypeOrmWalletLedger extends WalletLedger {
  constructor(protected readonly db: Db) {
    super();
  }

  async credit(orgId: string, amount: Money, memo: string, topUpId?: string): Promise<Credit> {
    if (amount.minor <= 0n) throw new RangeError('A credit must be positive');
    const [row] = await this.db.query<BalanceRow>(
      `INSERT INTO wallet_balances (org_id, currency, available) VALUES ($1, $2, $3)
       ON CONFLICT (org_id, currency) DO UPDATE
         SET available = wallet_balances.available + EXCLUDED.available, updated_at = now()
       RETURNING currency, available::text, reserved::text`,
      [orgId, amount.currency, amount.minor.toString()],
    );
    // RETURNING sees the row as the BEFORE INSERT trigger completed it (seq, created_at, after-values).
    const [written] = await this.db.query<WalletLedgerRow>(
      `INSERT INTO wallet_ledger (org_id, currency, kind, amount, memo, top_up_id) VALUES ($1, $2, 'credit', $3, $4, $5)
       RETURNING seq::text AS seq, public_id, kind, currency, amount::text AS amount, available_after::text AS available_after,
                 reserved_after::text AS reserved_after, operation_id, top_up_id, created_at`,
      [orgId, amount.currency, amount.minor.toString(), memo, topUpId ?? null],
    );
    return { balance: toBalance(row), transaction: toTransaction(written) };
  }

  async adjust(orgId: string, amount: Money, adjustment: AdjustmentInput): Promise<Credit | DebitRefused> {
    if (amount.minor <= 0n) throw new RangeError('An adjustment must be positive');
    const balance = adjustment.direction === 'credit' ? await this.addAvailable(orgId, amount) : await this.takeAvailable(orgId, amount);
    if ('refused' in balance) return balance;
    await this.db.query(
      `INSERT INTO wallet_adjustments (id, org_id, staff_id, currency, amount, direction, reason, reference) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [adjustment.id, orgId, adjustment.staffId, amount.currency, amount.minor.toString(), adjustment.direction, adjustment.reason, adjustment.reference],
    );
    const transaction = await this.appendRow(orgId, amount, adjustment.direction === 'credit' ? 'adjustment_credit' : 'adjustment_debit', adjustment.reason, { adjustmentId: adjustment.id });
    return { balance, transaction };
  }

  async debitRefund(orgId: string, amount: Money, refundId: string, reason: string, topUpId: string): Promise<Credit | DebitRefused> {
    if (amount.minor <= 0n) throw new RangeError('A refund must be positive');
    const balance = await this.takeAvailable(orgId, amount);
    if ('refused' in balance) return balance;
    return { balance, transaction: await this.appendRow(orgId, amount, 'refund', reason, { refundId, topUpId }) };
  }

  private async addAvailable(orgId: string, amount: Money): Promise<Balance> {
    const [row] = await this.db.query<BalanceRow>(
      `INSERT INTO wallet_balances (org_id, currency, available) VALUES ($1, $2, $3)
       ON CONFLICT (org_id, currency) DO UPDATE
         SET available = wallet_balances.available + EXCLUDED.available, updated_at = now()
       RETURNING currency, available::text, reserved::text`,
      [orgId, amount.currency, amount.minor.toString()],
    );
    return toBalance(row);
  }

  /** available − amount on the locked balance row (its latest version), or refused when it does not cover it. */
  private async takeAvailable(orgId: string, amount: Money): Promise<Balance | DebitRefused> {
    const [locked] = await this.db.query<{ available: string }>(
      'SELECT available::text FROM wallet_balances WHERE org_id = $1 AND currency = $2 FOR NO KEY UPDATE',
      [orgId, amount.currency],
    );
    const available = BigInt(locked?.available ?? '0');
    if (available < amount.minor) return { refused: true, available: Money.ofMinor(amount.currency, available) };
    const [row] = await this.db.query<BalanceRow>(
      `UPDATE wallet_balances SET available = available - $3::numeric, updated_at = now() WHERE org_id = $1 AND currency = $2
       RETURNING currency, available::text, reserved::text`,
      [orgId, amount.currency, amount.minor.toString()],
    );
    return toBalance(row);
  }

  private async appendRow(
    orgId: string,
    amount: Money,
    kind: 'adjustment_credit' | 'adjustment_debit' | 'refund',
    memo: string,
    ids: { adjustmentId?: string; refundId?: string; topUpId?: string },
  ) {
    const [written] = await this.db.query<WalletLedgerRow>(
      `INSERT INTO wallet_ledger (org_id, currency, kind, amount, memo, adjustment_id, refund_id, top_up_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       RETURNING seq::text AS seq, public_id, kind, currency, amount::text AS amount, available_after::text AS available_after,
                 reserved_after::text AS reserved_after, operation_id, top_up_id, created_at, memo, adjustment_id, refund_id`,
      [orgId, amount.currency, kind, amount.minor.toString(), memo, ids.adjustmentId ?? null, ids.refundId ?? null, ids.topUpId ?? null],
    );
    return toTransaction(written);
  }

  async balances(orgId: string): Promise<Balance[]> {
    const rows = await this.db.query<BalanceRow>(
      'SELECT currency, available::text, reserved::text FROM wallet_balances WHERE org_id = $1',
      [orgId],
      'wallet_balances',
    );
    return CURRENCIES.map((currency) => {
      const row = rows.find((r) => r.currency === currency);
      return row ? toBalance(row) : { currency, available: Money.zero(currency), reserved: Money.zero(currency) };
    });
  }

  async hold(orgId: string, amount: Money, operationId: string): Promise<HoldResult> {
    if (amount.minor <= 0n) throw new RangeError('A hold must be positive');
    // One statement: the balance row locked first (FOR NO KEY UPDATE answers its latest version,
    // after waiting for any other holder), the decision and the new balance taken from that
    // locked row, and the hold's ledger row appended only when it was taken (one round trip less
    // while the row is locked). Neither the decision nor the new values come from the row the
    // UPDATE finds in the statement's snapshot: a credit or release committed between the
    // statement's start and the lock leaves that version lower than the locked one, and
    // PostgreSQL evaluates the UPDATE's WHERE, and the CHECKs on the new row, on that version
    // before re-evaluating on the latest (a false 402, or a CHECK violation answered 500).
    const [row] = await this.db.query<BalanceRow & { held: boolean }>(
      `WITH w AS (
         SELECT available, reserved FROM wallet_balances WHERE org_id = $1 AND currency = $2 FOR NO KEY UPDATE
       ), held AS (
         UPDATE wallet_balances b
            SET available = w.available - $3::numeric, reserved = w.reserved + $3::numeric, updated_at = now()
           FROM w
          WHERE b.org_id = $1 AND b.currency = $2 AND w.available >= $3::numeric
         RETURNING b.currency, b.available::text, b.reserved::text
       ), appended AS (
         INSERT INTO wallet_ledger (org_id, currency, kind, amount, operation_id, memo)
         SELECT $1, $2, 'hold', $3::numeric, $4, 'reserved for operation' FROM held
       )
       SELECT true AS held, currency, available, reserved FROM held
       UNION ALL
       SELECT false, $2::text, available::text, reserved::text FROM w WHERE NOT EXISTS (SELECT 1 FROM held)`,
      [orgId, amount.currency, amount.minor.toString(), operationId],
      'wallet_hold_locked',
    );
    if (!row?.held) {
      return { held: false, available: Money.ofMinor(amount.currency, BigInt(row?.available ?? '0')) };
    }
    return { held: true, balance: toBalance(row) };
  }

  capture(operationId: string): Promise<Settlement | undefined> {
    return this.settle(operationId, 'capture');
  }

  release(operationId: string): Promise<Settlement | undefined> {
    return this.settle(operationId, 'release');
  }

  /**
   * One statement: each hold found by one probe of wallet_ledger_one_hold (LATERAL … LIMIT 1: a
   * nested loop whatever the planner believes about the ledger's size, where a generic plan made
   * while it was small read every hold of the ledger on every batch); then every balance row
   * concerned locked in (org_id, currency) order (FOR NO KEY UPDATE: the ledger's foreign key
   * takes KEY SHARE locks on the same rows; each found by one probe of the primary key, the hot
   * balance rows' many dead versions never scanned); then the settlement rows appended in that
   * order, their positions computed set-based (`heads`: each organization's wallet_heads row
   * taken once, after its balance rows, the lock order of every writer, and advanced by its
   * number of rows; seq, created_at and the after-values as running sums from the locked
   * balances, as the ledger's row trigger would give them one by one; the unique index refuses
   * a second settlement of a hold, and the whole statement with it); and each balance row
   * written once with the sums, computed from the locked row, never from the UPDATE's snapshot
   * version. The CHECKs keep reserved and available non-negative. Every row of the totals must
   * find its balance.
   */
  async settleMany(captures: readonly string[], releases: readonly string[]): Promise<void> {
    if (captures.length + releases.length === 0) return;
    const { rows } = await this.db.exec<{ balances: string }>(
      `WITH holds AS MATERIALIZED (
         SELECT h.org_id, h.currency, s.kind, h.amount, h.operation_id
           FROM unnest($1::text[], $2::text[]) AS s(operation_id, kind)
          CROSS JOIN LATERAL (SELECT org_id, currency, amount, operation_id FROM wallet_ledger
                               WHERE operation_id = s.operation_id AND kind = 'hold' LIMIT 1) h
       ), totals AS (
         SELECT org_id, currency, sum(amount) AS settled, coalesce(sum(amount) FILTER (WHERE kind = 'release'), 0) AS released
           FROM holds GROUP BY org_id, currency
       ), ordered AS MATERIALIZED (
         SELECT org_id, currency FROM totals ORDER BY org_id, currency
       ), locked AS MATERIALIZED (
         SELECT b.org_id, b.currency, b.available, b.reserved FROM ordered o
          CROSS JOIN LATERAL (SELECT org_id, currency, available, reserved FROM wallet_balances
                               WHERE org_id = o.org_id AND currency = o.currency LIMIT 1 FOR NO KEY UPDATE) b
       ), numbered AS MATERIALIZED (
         SELECT org_id, currency, kind, amount, operation_id,
                row_number() OVER (PARTITION BY org_id ORDER BY currency, operation_id) AS rn,
                count(*) OVER (PARTITION BY org_id) AS n,
                sum(amount) OVER (PARTITION BY org_id, currency ORDER BY operation_id ROWS UNBOUNDED PRECEDING) AS settled_upto,
                sum(CASE kind WHEN 'release' THEN amount ELSE 0 END)
                  OVER (PARTITION BY org_id, currency ORDER BY operation_id ROWS UNBOUNDED PRECEDING) AS released_upto
           FROM holds
       ), heads AS (
         INSERT INTO wallet_heads AS h (org_id, last_seq, last_at)
         SELECT org_id, count(*), now() FROM holds WHERE (SELECT count(*) FROM locked) >= 0 GROUP BY org_id ORDER BY org_id
         ON CONFLICT (org_id) DO UPDATE SET last_seq = h.last_seq + EXCLUDED.last_seq, last_at = greatest(h.last_at, EXCLUDED.last_at)
         RETURNING org_id, last_seq, last_at
       ), settled AS (
         INSERT INTO wallet_ledger (${LEDGER_POSITIONED_COLUMNS})
         SELECT x.org_id, x.currency, x.kind, x.amount, x.operation_id,
                CASE x.kind WHEN 'capture' THEN 'charged for operation' ELSE 'released from operation' END,
                ${NEW_LEDGER_PUBLIC_ID}, hd.last_seq - x.n + x.rn, hd.last_at, l.available + x.released_upto, l.reserved - x.settled_upto
           FROM numbered x JOIN heads hd ON hd.org_id = x.org_id JOIN locked l ON l.org_id = x.org_id AND l.currency = x.currency
          ORDER BY x.org_id, x.rn
       )
       UPDATE wallet_balances AS b
          SET reserved = l.reserved - t.settled, available = l.available + t.released, updated_at = now()
         FROM totals t JOIN locked l ON l.org_id = t.org_id AND l.currency = t.currency
        WHERE b.org_id = t.org_id AND b.currency = t.currency
       RETURNING (SELECT count(*) FROM totals)::text AS balances`,
      [[...captures, ...releases], [...captures.map(() => 'capture'), ...releases.map(() => 'release')]],
      'wallet_settle_many_positioned',
    );
    if (rows.length > 0 && rows.length !== Number(rows[0].balances)) {
      throw new Error(`Settled holds of ${rows[0].balances} balances, wrote ${rows.length}`);
    }
  }

  /**
   * One statement: the balance row written first (its row lock taken before the ledger head, the
   * lock order of every writer; its CHECKs keep reserved and available non-negative), then the
   * settlement row, which the unique index (one capture-or-release per operation) refuses for a
   * hold already settled, the whole statement with it.
   */
  private async settle(operationId: string, kind: 'capture' | 'release'): Promise<Settlement | undefined> {
    const [row] = await this.db.query<{ org_id: string; currency: Currency; amount: string }>(
      `WITH h AS (
         SELECT org_id, currency, amount FROM wallet_ledger WHERE operation_id = $1 AND kind = 'hold'
       ), moved AS (
         UPDATE wallet_balances b
            SET reserved = b.reserved - h.amount,
                available = b.available + CASE WHEN $2::text = 'release' THEN h.amount ELSE 0 END, updated_at = now()
           FROM h WHERE b.org_id = h.org_id AND b.currency = h.currency
         RETURNING b.org_id, b.currency, h.amount
       )
       INSERT INTO wallet_ledger (org_id, currency, kind, amount, operation_id, memo)
       SELECT org_id, currency, $2::text, amount, $1::text, $3::text FROM moved
       RETURNING org_id, currency, amount::text`,
      [operationId, kind, kind === 'capture' ? 'charged for operation' : 'released from operation'],
      'wallet_settle',
    );
    if (!row) return undefined;
    return { orgId: row.org_id, operationId, amount: Money.ofMinor(row.currency, BigInt(row.amount)) };
  }
}
