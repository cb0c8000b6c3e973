import { Injectable } from '@nestjs/common';
import { Db } from '../../../shared/database/transaction';
import { Currency, Money } from '../../../shared/kernel/money/money';
import { RefundStore } from '../application/refunds.port';
import { RefundStatus, TopUpRefund } from '../domain/refund';

interface Row {
  id: string;
  top_up_id: string;
  org_id: string;
  currency: Currency;
  amount: string;
  reason: string;
  status: RefundStatus;
  provider: string;
  provider_refund_id: string | null;
  failure_reason: string | null;
  staff_id: string | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = `id, top_up_id, org_id, currency, amount::text AS amount, reason, status, provider, provider_refund_id, failure_reason, staff_id, created_at, updated_at`;

const toRefund = (r: Row): TopUpRefund => ({
  id: r.id,
  topUpId: r.top_up_id,
  orgId: r.org_id,
  amount: Money.ofMinor(r.currency, BigInt(r.amount)),
  reason: r.reason,
  status: r.status,
  provider: r.provider,
  providerRefundId: r.provider_refund_id,
  failureReason: r.failure_reason,
  staffId: r.staff_id,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

@Injectable()
export class TypeOrmRefundStore extends RefundStore {
  constructor(private readonly db: Db) {
    super();
  }

  async insert(r: TopUpRefund, nextAttemptAt: Date): Promise<void> {
    await this.db.query(
      `INSERT INTO top_up_refunds (id, top_up_id, org_id, currency, amount, reason, status, provider, staff_id, created_at, updated_at, next_attempt_at)
       VALUES ($1, $2, $3, $4, $5, $6, 'pending', $7, $8, $9, $9, $10)`,
      [r.id, r.topUpId, r.orgId, r.amount.currency, r.amount.minor.toString(), r.reason, r.provider, r.staffId, r.createdAt, nextAttemptAt],
    );
  }

  async find(id: string): Promise<TopUpRefund | undefined> {
    const row = await this.db.one<Row>(`SELECT ${COLUMNS} FROM top_up_refunds WHERE id = $1`, [id]);
    return row && toRefund(row);
  }

  async lock(id: string): Promise<TopUpRefund | undefined> {
    const row = await this.db.one<Row>(`SELECT ${COLUMNS} FROM top_up_refunds WHERE id = $1 FOR NO KEY UPDATE`, [id]);
    return row && toRefund(row);
  }

  async findByProviderRefundId(provider: string, providerRefundId: string): Promise<TopUpRefund | undefined> {
    const row = await this.db.one<Row>(`SELECT ${COLUMNS} FROM top_up_refunds WHERE provider_refund_id = $1 AND provider = $2`, [providerRefundId, provider]);
    return row && toRefund(row);
  }

  async save(r: TopUpRefund, nextAttemptAt: Date | null): Promise<void> {
    await this.db.query(
      `UPDATE top_up_refunds SET status = $2, provider_refund_id = $3, failure_reason = $4, updated_at = $5, next_attempt_at = $6 WHERE id = $1`,
      [r.id, r.status, r.providerRefundId, r.failureReason, r.updatedAt, nextAttemptAt],
    );
  }

  async postpone(id: string, next: (attempts: number) => Date): Promise<void> {
    const row = await this.db.one<{ attempts: number }>(`SELECT attempts FROM top_up_refunds WHERE id = $1`, [id]);
    await this.db.query(`UPDATE top_up_refunds SET attempts = attempts + 1, next_attempt_at = $2 WHERE id = $1 AND status = 'pending'`, [id, next((row?.attempts ?? 0) + 1)]);
  }

  async due(now: Date, limit: number): Promise<string[]> {
    // Claimed for a minute (another worker skips them meanwhile); the attempt sets the next one.
    const rows = await this.db.query<{ id: string }>(
      `UPDATE top_up_refunds SET next_attempt_at = $1::timestamptz + interval '60 seconds'
        WHERE id IN (SELECT id FROM top_up_refunds WHERE status = 'pending' AND next_attempt_at <= $1 ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED)
       RETURNING id`,
      [now, limit],
    );
    return rows.map((r) => r.id);
  }

  async hurry(topUpId: string, now: Date): Promise<number> {
    const rows = await this.db.query(`UPDATE top_up_refunds SET next_attempt_at = $2 WHERE top_up_id = $1 AND status = 'pending' AND next_attempt_at > $2 RETURNING 1 AS hurried`, [topUpId, now]);
    return rows.length;
  }

  async ofTopUp(topUpId: string): Promise<TopUpRefund[]> {
    const rows = await this.db.query<Row>(`SELECT ${COLUMNS} FROM top_up_refunds WHERE top_up_id = $1 ORDER BY created_at, id`, [topUpId]);
    return rows.map(toRefund);
  }
}
