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
