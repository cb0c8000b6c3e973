import { Injectable } from '@nestjs/common';
import { Db } from '../../../shared/database/transaction';
import { CURRENCIES } from '../../../shared/kernel/money/money';
import { HoldTotals, OperationCount, ServiceStats } from '../application/service-stats.port';

/**
 * Unfinished operations by type and status. Its condition is the predicate of the partial index
 * operations_claim_idx, so it reads only unfinished rows, however many finished ones the table holds.
 */
export const UNFINISHED_OPERATION_COUNTS_SQL =
  "SELECT type, status, count(*)::text AS count FROM operations WHERE status IN ('pending', 'running') GROUP BY 1, 2 ORDER BY 1, 2";

@Injectable()
export class TypeOrmServiceStats extends ServiceStats {
  constructor(private readonly db: Db) {
    super();
  }

  async operationCounts(): Promise<OperationCount[]> {
    const rows = await this.db.query<{ type: string; status: string; count: string }>(UNFINISHED_OPERATION_COUNTS_SQL);
    return rows.map((r) => ({ type: r.type, status: r.status, count: Number(r.count) }));
  }

  async oldestPendingOperation(): Promise<Date | null> {
    // The partial index operations_claim_idx (created_at) WHERE status IN ('pending', 'running') serves this.
    const row = await this.db.one<{ oldest: Date | null }>("SELECT min(created_at) AS oldest FROM operations WHERE status = 'pending'");
    return row?.oldest ?? null;
  }

  async holds(): Promise<HoldTotals[]> {
    // Holds of unfinished operations (the claim index bounds the scan) that nothing settled yet.
    const open = await this.db.query<{ currency: string; outstanding: string }>(
      `SELECT h.currency, count(*)::text AS outstanding
         FROM operations o
         JOIN wallet_ledger h ON h.operation_id = o.id AND h.kind = 'hold'
        WHERE o.status IN ('pending', 'running')
          AND NOT EXISTS (SELECT 1 FROM wallet_ledger s WHERE s.operation_id = h.operation_id AND s.kind IN ('capture', 'release'))
        GROUP BY h.currency`,
    );
    const reserved = await this.db.query<{ currency: string; reserved: string }>(
      'SELECT currency, sum(reserved)::text AS reserved FROM wallet_balances GROUP BY currency',
    );
    return CURRENCIES.map((currency) => ({
      currency,
      outstanding: Number(open.find((r) => r.currency === currency)?.outstanding ?? '0'),
      reservedMinor: BigInt(reserved.find((r) => r.currency === currency)?.reserved ?? '0'),
    }));
  }
}
