import { Injectable } from '@nestjs/common';
import { Db } from '../../../shared/database/transaction';
import { Currency, Money } from '../../../shared/kernel/money/money';
import { EventOutcome, TopUpCursor, TopUpFilter, TopUpStore } from '../application/top-ups.port';
import { TopUp, TopUpStatus } from '../domain/top-up';

interface Row {
  id: string;
  org_id: string;
  status: TopUpStatus;
  currency: Currency;
  amount: string;
  provider: string;
  session_id: string;
  checkout_url: string;
  return_url: string | null;
  created_at: Date;
  created_at_text: string;
  expires_at: Date;
  updated_at: Date;
  paid_at: Date | null;
  failure_reason: string | null;
  refunded_amount: string;
}

const COLUMNS = `id, org_id, status, currency, amount::text AS amount, provider, session_id, checkout_url, return_url, created_at,
  to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at_text, expires_at, updated_at, paid_at, failure_reason, refunded_amount::text AS refunded_amount`;

const toTopUp = (r: Row): TopUp => ({
  id: r.id,
  orgId: r.org_id,
  status: r.status,
  amount: Money.ofMinor(r.currency, BigInt(r.amount)),
  provider: r.provider,
  sessionId: r.session_id,
  checkoutUrl: r.checkout_url,
  returnUrl: r.return_url,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  updatedAt: r.updated_at,
  paidAt: r.paid_at,
  failureReason: r.failure_reason,
  refundedAmount: Money.ofMinor(r.currency, BigInt(r.refunded_amount)),
});

@Injectable()
export class TypeOrmTopUpStore extends TopUpStore {
  constructor(private readonly db: Db) {
    super();
  }

  async insert(t: TopUp): Promise<void> {
    await this.db.query(
      `INSERT INTO top_ups (id, org_id, status, currency, amount, provider, session_id, checkout_url, return_url, created_at, expires_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $10)`,
      [t.id, t.orgId, t.status, t.amount.currency, t.amount.minor.toString(), t.provider, t.sessionId, t.checkoutUrl, t.returnUrl, t.createdAt, t.expiresAt],
    );
  }

  async find(orgId: string, id: string): Promise<TopUp | undefined> {
    const row = await this.db.one<Row>(`SELECT ${COLUMNS} FROM top_ups WHERE id = $1 AND org_id = $2`, [id, orgId]);
    return row && toTopUp(row);
  }

  async findAny(id: string): Promise<TopUp | undefined> {
    const row = await this.db.one<Row>(`SELECT ${COLUMNS} FROM top_ups WHERE id = $1`, [id]);
    return row && toTopUp(row);
  }

  async list(orgId: string, filter: TopUpFilter, limit: number, after: TopUpCursor | undefined): Promise<{ items: TopUp[]; next: TopUpCursor | null }> {
    const params: unknown[] = [orgId];
    const where = ['org_id = $1'];
    if (filter.status) where.push(`status = $${params.push(filter.status)}`);
    if (filter.currency) where.push(`currency = $${params.push(filter.currency)}`);
    if (after) {
      params.push(after.createdAt, after.id);
      where.push(`(created_at, id) < ($${params.length - 1}::timestamptz, $${params.length})`);
    }
    params.push(limit + 1);
    const rows = await this.db.query<Row>(
      `SELECT ${COLUMNS} FROM top_ups WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT $${params.length}`,
      params,
    );
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return { items: page.map(toTopUp), next: rows.length > limit && last ? { createdAt: last.created_at_text, id: last.id } : null };
  }

  async countPending(orgId: string): Promise<number> {
    const row = await this.db.one<{ n: number }>(`SELECT count(*)::int AS n FROM top_ups WHERE org_id = $1 AND status = 'pending'`, [orgId]);
    return row?.n ?? 0;
  }

  async lockOrganization(orgId: string): Promise<void> {
    await this.db.query(`SELECT 1 FROM organizations WHERE id = $1 FOR NO KEY UPDATE`, [orgId]);
  }

  async lock(id: string): Promise<TopUp | undefined> {
    const row = await this.db.one<Row>(`SELECT ${COLUMNS} FROM top_ups WHERE id = $1 FOR NO KEY UPDATE`, [id]);
    return row && toTopUp(row);
  }

  async saveStatus(t: TopUp): Promise<void> {
    await this.db.query(`UPDATE top_ups SET status = $2, updated_at = $3, paid_at = $4, failure_reason = $5, refunded_amount = $6 WHERE id = $1`, [
      t.id,
      t.status,
      t.updatedAt,
      t.paidAt,
      t.failureReason,
      t.refundedAmount.minor.toString(),
    ]);
  }

  async duePending(now: Date, limit: number): Promise<{ id: string; sessionId: string }[]> {
    const rows = await this.db.query<{ id: string; session_id: string }>(
      `SELECT id, session_id FROM top_ups WHERE status = 'pending' AND expires_at <= $1 ORDER BY expires_at LIMIT $2`,
      [now, limit],
    );
    return rows.map((r) => ({ id: r.id, sessionId: r.session_id }));
  }

  async recordEvent(provider: string, eventId: string, type: string, topUpId: string | null): Promise<boolean> {
    const rows = await this.db.query(
      `INSERT INTO payment_events (provider, event_id, type, top_up_id, outcome) VALUES ($1, $2, $3, $4, 'ignored')
       ON CONFLICT (provider, event_id) DO NOTHING RETURNING 1 AS inserted`,
      [provider, eventId, type, topUpId],
    );
    return rows.length === 1;
  }

  async setEventOutcome(provider: string, eventId: string, outcome: EventOutcome): Promise<void> {
    await this.db.query(`UPDATE payment_events SET outcome = $3 WHERE provider = $1 AND event_id = $2`, [provider, eventId, outcome]);
  }
}
