import { Db } from '../../../shared/database/transaction';
import { Finding, InvariantCheck } from '../application/invariant-checks.port';

/**
 * wallet.adjustments_once: each wallet adjustment has exactly one ledger row, of its kind
 * (adjustment_credit or adjustment_debit by its direction), amount, currency and organization.
 */
export class AdjustmentsInLedgerOnceCheck implements InvariantCheck {
  readonly name = 'wallet.adjustments_once';
  readonly description = 'Each wallet adjustment has one ledger row of its direction, amount, currency and organization';

  constructor(private readonly db: Db) {}

  async findViolations(): Promise<Finding[]> {
    const rows = await this.db.query<{ id: string; org_id: string; rows: number; matching: number }>(
      `SELECT a.id, a.org_id, count(l.id)::int AS rows,
              count(l.id) FILTER (WHERE l.amount = a.amount AND l.currency = a.currency AND l.org_id = a.org_id
                                   AND l.kind = CASE a.direction WHEN 'credit' THEN 'adjustment_credit' ELSE 'adjustment_debit' END)::int AS matching
         FROM wallet_adjustments a LEFT JOIN wallet_ledger l ON l.adjustment_id = a.id
        GROUP BY a.id
       HAVING count(l.id) <> 1 OR count(l.id) FILTER (WHERE l.amount = a.amount AND l.currency = a.currency AND l.org_id = a.org_id
                                   AND l.kind = CASE a.direction WHEN 'credit' THEN 'adjustment_credit' ELSE 'adjustment_debit' END) <> 1
        ORDER BY a.id`,
    );
    return rows.map((r) => ({
      subject: r.id,
      message: `adjustment with ${r.rows} ledger row(s), ${r.matching} of its direction, amount, currency and organization`,
      details: { org_id: r.org_id, ledger_rows: r.rows, matching_rows: r.matching },
    }));
  }
}

/**
 * top_ups.refunds_debited_once: each refund of a top-up has exactly one ledger row (type refund)
 * of its amount, currency, organization and top-up; a refund the provider refused (`failed`) has
 * exactly one compensating credit adjustment (reference = the refund) of its amount, any other
 * none; and no refund row of the ledger names a refund that does not exist.
 */
export class RefundsDebitedOnceCheck implements InvariantCheck {
  readonly name = 'top_ups.refunds_debited_once';
  readonly description = 'Each refund has one debit of its amount, currency, organization and top-up; a refused refund one compensating credit, any other none';

  constructor(private readonly db: Db) {}

  async findViolations(): Promise<Finding[]> {
    const rows = await this.db.query<{ id: string; org_id: string | null; status: string | null; debits: number; matching: number; compensations: number }>(
      `SELECT r.id, r.org_id, r.status,
              (SELECT count(*)::int FROM wallet_ledger l WHERE l.refund_id = r.id) AS debits,
              (SELECT count(*)::int FROM wallet_ledger l WHERE l.refund_id = r.id AND l.kind = 'refund' AND l.amount = r.amount
                  AND l.currency = r.currency AND l.org_id = r.org_id AND l.top_up_id = r.top_up_id) AS matching,
              (SELECT count(*)::int FROM wallet_adjustments a WHERE a.reference = r.id AND a.staff_id IS NULL AND a.direction = 'credit'
                  AND a.amount = r.amount AND a.currency = r.currency AND a.org_id = r.org_id) AS compensations
         FROM top_up_refunds r
       UNION ALL
       SELECT l.refund_id, l.org_id, NULL, count(*)::int, 0, 0
         FROM wallet_ledger l WHERE l.refund_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM top_up_refunds r WHERE r.id = l.refund_id)
        GROUP BY l.refund_id, l.org_id`,
    );
    return rows
      .filter((r) => r.status === null || r.debits !== 1 || r.matching !== 1 || r.compensations !== (r.status === 'failed' ? 1 : 0))
      .sort((a, b) => (a.id < b.id ? -1 : 1))
      .map((r) => ({
        subject: r.id,
        message:
          r.status === null
            ? `${r.debits} ledger row(s) name a refund that does not exist`
            : `${r.status} refund with ${r.debits} debit(s), ${r.matching} of its amount, currency, organization and top-up, and ${r.compensations} compensating credit(s)`,
        details: { org_id: r.org_id, status: r.status, debits: r.debits, matching_debits: r.matching, compensations: r.compensations },
      }));
  }
}

/**
 * top_ups.refunded_within_amount: each top-up's refunded_amount is the sum of its refunds not
 * refused, never more than the top-up's amount, and its status says so (partially_refunded,
 * refunded); only a paid top-up has refunds.
 */
export class RefundedWithinAmountCheck implements InvariantCheck {
  readonly name = 'top_ups.refunded_within_amount';
  readonly description = "Each top-up's refunded_amount is the sum of its refunds not refused, at most its amount, its status matching";

  constructor(private readonly db: Db) {}

  async findViolations(): Promise<Finding[]> {
    const rows = await this.db.query<{ id: string; org_id: string; status: string; amount: string; refunded_amount: string; refunds_total: string; refunds: number }>(
      `SELECT t.id, t.org_id, t.status, t.amount::text AS amount, t.refunded_amount::text AS refunded_amount,
              coalesce(sum(r.amount) FILTER (WHERE r.status <> 'failed'), 0)::text AS refunds_total, count(r.id)::int AS refunds
         FROM top_ups t LEFT JOIN top_up_refunds r ON r.top_up_id = t.id
        GROUP BY t.id
       HAVING t.refunded_amount <> coalesce(sum(r.amount) FILTER (WHERE r.status <> 'failed'), 0)
           OR t.refunded_amount > t.amount
           OR (count(r.id) > 0 AND t.status NOT IN ('succeeded', 'partially_refunded', 'refunded'))
           OR t.status <> CASE WHEN t.refunded_amount = 0 THEN t.status WHEN t.refunded_amount >= t.amount THEN 'refunded' ELSE 'partially_refunded' END
        ORDER BY t.id`,
    );
    return rows.map((r) => ({
      subject: r.id,
      message: `${r.status} top-up of ${r.amount} with refunded_amount ${r.refunded_amount}; its ${r.refunds} refund(s) not refused total ${r.refunds_total}`,
      details: { org_id: r.org_id, status: r.status, amount: r.amount, refunded_amount: r.refunded_amount, refunds_total: r.refunds_total },
    }));
  }
}
