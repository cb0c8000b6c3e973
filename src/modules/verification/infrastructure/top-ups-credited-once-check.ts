import { Db } from '../../../shared/database/transaction';
import { Finding, InvariantCheck } from '../application/invariant-checks.port';

/**
 * top_ups.credited_once: each paid (`succeeded`, `partially_refunded`, `refunded`) top-up has `paid_at` and exactly one credit row of its
 * id, amount, currency and organization; no other top-up has one, and no credit names a top-up
 * that does not exist.
 */
export class TopUpsCreditedOnceCheck implements InvariantCheck {
  readonly name = 'top_ups.credited_once';
  readonly description = 'Each succeeded top-up has paid_at and one credit of its amount, currency and organization; no other top-up has a credit';

  constructor(private readonly db: Db) {}

  async findViolations(): Promise<Finding[]> {
    const rows = await this.db.query<{ subject: string; org_id: string | null; status: string | null; credits: number; matching: number; paid: boolean }>(
      `SELECT t.id AS subject, t.org_id, t.status, count(l.id)::int AS credits,
              count(l.id) FILTER (WHERE l.amount = t.amount AND l.currency = t.currency AND l.org_id = t.org_id)::int AS matching,
              t.paid_at IS NOT NULL AS paid
         FROM top_ups t LEFT JOIN wallet_ledger l ON l.top_up_id = t.id AND l.kind = 'credit'
        GROUP BY t.id
       HAVING (t.status IN ('succeeded', 'partially_refunded', 'refunded') AND (t.paid_at IS NULL OR count(l.id) <> 1 OR count(l.id) FILTER (WHERE l.amount = t.amount AND l.currency = t.currency AND l.org_id = t.org_id) <> 1))
           OR (t.status NOT IN ('succeeded', 'partially_refunded', 'refunded') AND count(l.id) > 0)
       UNION ALL
       SELECT l.top_up_id, l.org_id, NULL, count(*)::int, 0, false
         FROM wallet_ledger l WHERE l.top_up_id IS NOT NULL AND l.kind = 'credit' AND NOT EXISTS (SELECT 1 FROM top_ups t WHERE t.id = l.top_up_id)
        GROUP BY l.top_up_id, l.org_id
       ORDER BY 1`,
    );
    return rows.map((r) => ({
      subject: r.subject,
      message:
        r.status === null
          ? `${r.credits} credit(s) name a top-up that does not exist`
          : ['succeeded', 'partially_refunded', 'refunded'].includes(r.status)
            ? `${r.status} top-up with ${r.credits} credit(s), ${r.matching} of its amount, currency and organization${r.paid ? '' : ', and no paid_at'}`
            : `${r.status} top-up with ${r.credits} credit(s)`,
      details: { org_id: r.org_id, status: r.status, credits: r.credits, matching_credits: r.matching },
    }));
  }
}
