import { Injectable } from '@nestjs/common';
import { Db } from '../../../shared/database/transaction';
import { Currency, Money } from '../../../shared/kernel/money/money';
import { WalletHistory } from '../application/wallet-history.port';
import { describeTransaction } from '../domain/transaction-description';
import { TransactionType, WalletTransaction, WalletTransactionCursor, WalletTransactionFilter } from '../domain/wallet-transaction';

/** The ledger's kinds: the wire's types, adjustments stored by direction. */
export type LedgerKind = Exclude<TransactionType, 'adjustment'> | 'adjustment_credit' | 'adjustment_debit';

export interface WalletLedgerRow {
  seq: string;
  public_id: string;
  kind: LedgerKind;
  currency: Currency;
  amount: string;
  available_after: string;
  reserved_after: string;
  operation_id: string | null;
  top_up_id: string | null;
  created_at: Date;
  /** The operation's type, term and target (the history's join; absent on a credit just written). */
  op_type?: string | null;
  op_term?: string | null;
  target_name?: string | null;
  target_id?: string | null;
  memo?: string | null;
  adjustment_id?: string | null;
  refund_id?: string | null;
}

export function toTransaction(r: WalletLedgerRow): WalletTransaction {
  return {
    id: r.public_id,
    type: r.kind === 'adjustment_credit' || r.kind === 'adjustment_debit' ? 'adjustment' : r.kind,
    currency: r.currency,
    amount: Money.ofMinor(r.currency, BigInt(r.amount)),
    availableAfter: Money.ofMinor(r.currency, BigInt(r.available_after)),
    reservedAfter: Money.ofMinor(r.currency, BigInt(r.reserved_after)),
    source: r.kind !== 'credit' ? null : r.top_up_id !== null ? 'top_up' : 'operator',
    operationId: r.operation_id,
    topUpId: r.top_up_id,
    description: describeTransaction({
      type: r.kind,
      topUpId: r.top_up_id,
      reason: r.memo ?? null,
      operationId: r.operation_id,
      subject: r.op_type
        ? { operationType: r.op_type, termMonths: r.op_term != null && /^\d+$/.test(r.op_term) ? Number(r.op_term) : null, name: r.target_name ?? null, targetId: r.target_id ?? null }
        : null,
    }),
    createdAt: r.created_at,
    ...(r.kind === 'adjustment_credit' || r.kind === 'adjustment_debit' || r.kind === 'refund'
      ? { direction: r.kind === 'adjustment_credit' ? 'credit' : 'debit', reason: r.memo ?? null, adjustmentId: r.adjustment_id ?? null, refundId: r.refund_id ?? null }
      : {}),
  };
}

const MAX_SEQ = '9223372036854775807';

/**
 * Pages newest first by `seq`, the row's position in its organization's ledger. Rows commit in
 * `seq` order (the ledger's trigger holds the organization's wallet_heads row to the commit), so
 * a reader always sees a prefix of the ledger: a page never skips or repeats a row. `since` and
 * `until` become `seq` bounds (created_at is non-decreasing in seq: one probe of
 * wallet_ledger_org_created finds the first row at an instant); the created_at conditions stay
 * for rows written before the trigger existed.
 */
@Injectable()
export class TypeOrmWalletHistory extends WalletHistory {
  constructor(private readonly db: Db) {
    super();
  }

  async list(
    orgId: string,
    filter: WalletTransactionFilter,
    limit: number,
    after: WalletTransactionCursor | undefined,
  ): Promise<{ items: WalletTransaction[]; next: WalletTransactionCursor | null }> {
    const params: unknown[] = [orgId];
    const where = ['l.org_id = $1'];
    const add = (sql: (p: string) => string, value: unknown) => {
      params.push(value);
      where.push(sql(`$${params.length}`));
    };
    if (filter.currency !== undefined) add((p) => `l.currency = ${p}`, filter.currency);
    if (filter.type === 'adjustment') where.push(`l.kind IN ('adjustment_credit', 'adjustment_debit')`);
    else if (filter.type !== undefined) add((p) => `l.kind = ${p}`, filter.type);
    if (filter.operationId !== undefined) add((p) => `l.operation_id = ${p}`, filter.operationId);
    if (filter.topUpId !== undefined) add((p) => `l.top_up_id = ${p}`, filter.topUpId);
    const firstSeqAt = (p: string) =>
      `COALESCE((SELECT b.seq FROM wallet_ledger b WHERE b.org_id = $1 AND b.created_at >= ${p} ORDER BY b.created_at, b.seq LIMIT 1), ${MAX_SEQ})`;
    if (filter.since !== undefined) add((p) => `l.created_at >= ${p} AND l.seq >= ${firstSeqAt(p)}`, filter.since);
    if (filter.until !== undefined) add((p) => `l.created_at < ${p} AND l.seq < ${firstSeqAt(p)}`, filter.until);
    if (after !== undefined) add((p) => `l.seq < ${p}::bigint`, after.seq);
    params.push(limit + 1);
    const sql = `SELECT l.seq::text AS seq, l.public_id, l.kind, l.currency, l.amount::text AS amount,
              l.available_after::text AS available_after, l.reserved_after::text AS reserved_after,
              l.operation_id, l.top_up_id, l.created_at,
              o.type AS op_type, o.params->>'term_months' AS op_term, COALESCE(v.name, s.name) AS target_name,
              COALESCE(o.volume_id, o.vm_id) AS target_id,
              CASE WHEN l.kind IN ('adjustment_credit', 'adjustment_debit', 'refund') THEN l.memo END AS memo, l.adjustment_id, l.refund_id
         FROM wallet_ledger l
         LEFT JOIN operations o ON o.id = l.operation_id
         LEFT JOIN volumes v ON v.id = o.volume_id
         LEFT JOIN servers s ON s.id = o.vm_id
        WHERE ${where.join(' AND ')}
        ORDER BY l.seq DESC
        LIMIT $${params.length}`;
    // The filters present decide the SQL text: each combination is its own prepared statement.
    const rows = await this.db.query<WalletLedgerRow>(sql, params, this.db.statementName('wallet_history_list', sql));
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return { items: page.map(toTransaction), next: rows.length > limit && last ? { seq: last.seq } : null };
  }
}
