import { Db } from '../../../shared/database/transaction';
import { Finding, InvariantCheck } from '../application/invariant-checks.port';

/**
 * wallet.ledger_chain: per organization and currency in `seq` order, each ledger row's
 * after-values are the previous row's plus its movement (credit and adjustment credit: available +; adjustment debit and refund: available −; hold: available −,
 * reserved +; capture: reserved −; release: reserved −, available +), and the last row's are the
 * balance row's.
 */
export class WalletLedgerChainCheck implements InvariantCheck {
  readonly name = 'wallet.ledger_chain';
  readonly description = "Each ledger row's available_after and reserved_after = the previous row's + its movement; the last row's = the balance";

  constructor(private readonly db: Db) {}

  async findViolations(): Promise<Finding[]> {
    const rows = await this.db.query<{ org_id: string; currency: string; public_id: string; problem: string; expected_available: string; expected_reserved: string; available_after: string; reserved_after: string }>(
      `WITH chain AS (
         SELECT org_id, currency, seq, public_id, available_after, reserved_after,
                coalesce(lag(available_after) OVER w, 0)
                  + CASE kind WHEN 'credit' THEN amount WHEN 'adjustment_credit' THEN amount WHEN 'hold' THEN -amount WHEN 'release' THEN amount
                              WHEN 'adjustment_debit' THEN -amount WHEN 'refund' THEN -amount ELSE 0 END AS expected_available,
                coalesce(lag(reserved_after) OVER w, 0)
                  + CASE kind WHEN 'hold' THEN amount WHEN 'capture' THEN -amount WHEN 'release' THEN -amount ELSE 0 END AS expected_reserved,
                row_number() OVER (PARTITION BY org_id, currency ORDER BY seq DESC) AS from_end
           FROM wallet_ledger
         WINDOW w AS (PARTITION BY org_id, currency ORDER BY seq)
       )
       SELECT org_id, currency, public_id, 'row' AS problem, expected_available::text, expected_reserved::text, available_after::text, reserved_after::text
         FROM chain WHERE expected_available <> available_after OR expected_reserved <> reserved_after
       UNION ALL
       SELECT c.org_id, c.currency, c.public_id, 'balance', b.available::text, b.reserved::text, c.available_after::text, c.reserved_after::text
         FROM chain c JOIN wallet_balances b ON b.org_id = c.org_id AND b.currency = c.currency
        WHERE c.from_end = 1 AND (b.available <> c.available_after OR b.reserved <> c.reserved_after)
       ORDER BY 1, 2, 3`,
    );
    return rows.map((r) => ({
      subject: `${r.org_id}/${r.currency}/${r.public_id}`,
      message:
        r.problem === 'row'
          ? `after-values ${r.available_after}/${r.reserved_after} but the previous row plus this movement gives ${r.expected_available}/${r.expected_reserved} (available/reserved, minor units)`
          : `the newest row's after-values ${r.available_after}/${r.reserved_after} differ from the balance ${r.expected_available}/${r.expected_reserved} (available/reserved, minor units)`,
      details: {
        org_id: r.org_id,
        currency: r.currency,
        transaction_id: r.public_id,
        available_after: r.available_after,
        reserved_after: r.reserved_after,
        expected_available: r.expected_available,
        expected_reserved: r.expected_reserved,
      },
    }));
  }
}
