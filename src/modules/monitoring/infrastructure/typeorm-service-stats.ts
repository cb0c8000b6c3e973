import { Injectable } from '@nestjs/common';
import { Db } from '../../../shared/database/transaction';
import { CURRENCIES } from '../../../shared/kernel/money/money';
import { ServiceSnapshot, ServiceStats } from '../application/service-stats.port';

/**
 * Unfinished operations by type and status. Its condition is the predicate of the partial index
 * operations_claim_idx, so it reads only unfinished rows, however many finished ones the table holds.
 */
export const UNFINISHED_OPERATION_COUNTS_SQL =
  "SELECT type, status, count(*)::text AS count FROM operations WHERE status IN ('pending', 'running') GROUP BY 1, 2 ORDER BY 1, 2";

/**
 * Every gauge's figures in one statement (one round trip): the unfinished operations (above), the
 * oldest pending one (the partial index operations_claim_idx serves it), the holds of unfinished
 * operations that nothing settled yet (the claim index bounds the scan), the reserved balances,
 * the pending top-ups and the
 * pending webhook deliveries with the earliest due one ($1: now).
 */
export const SERVICE_SNAPSHOT_SQL = `
  SELECT (SELECT COALESCE(json_agg(c), '[]'::json) FROM (${UNFINISHED_OPERATION_COUNTS_SQL}) c) AS operations,
         (SELECT min(created_at) FROM operations WHERE status = 'pending') AS oldest,
         (SELECT COALESCE(json_agg(held), '[]'::json) FROM (
            SELECT h.currency, count(*)::text AS outstanding
              FROM operations o
              JOIN wallet_ledger h ON h.operation_id = o.id AND h.kind = 'hold'
             WHERE o.status IN ('pending', 'running')
               AND NOT EXISTS (SELECT 1 FROM wallet_ledger s WHERE s.operation_id = h.operation_id AND s.kind IN ('capture', 'release'))
             GROUP BY h.currency) held) AS open_holds,
         (SELECT COALESCE(json_agg(b), '[]'::json) FROM (SELECT currency, sum(reserved)::text AS reserved FROM wallet_balances GROUP BY currency) b) AS reserved,
         (SELECT COALESCE(json_agg(tu), '[]'::json) FROM (SELECT currency, count(*)::text AS n FROM top_ups WHERE status = 'pending' GROUP BY currency) tu) AS top_ups_pending,
         (SELECT count(*)::text FROM webhook_deliveries WHERE status = 'pending') AS deliveries_pending,
         (SELECT min(next_attempt_at) FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= $1) AS earliest_due`;

interface Row {
  operations: { type: string; status: string; count: string }[];
  oldest: Date | null;
  open_holds: { currency: string; outstanding: string }[];
  reserved: { currency: string; reserved: string }[];
  top_ups_pending: { currency: string; n: string }[];
  deliveries_pending: string;
  earliest_due: Date | null;
}

@Injectable()
export class TypeOrmServiceStats extends ServiceStats {
  constructor(private readonly db: Db) {
    super();
  }

  async snapshot(now: Date): Promise<ServiceSnapshot> {
    const row = await this.db.one<Row>(SERVICE_SNAPSHOT_SQL, [now], 'metrics_snapshot');
    if (!row) throw new Error('the metrics snapshot returned no row');
    const json = <T>(value: T | string): T => (typeof value === 'string' ? (JSON.parse(value) as T) : value);
    const open = json(row.open_holds);
    const reserved = json(row.reserved);
    const topUps = json(row.top_ups_pending);
    return {
      operations: json(row.operations).map((r) => ({ type: r.type, status: r.status, count: Number(r.count) })),
      oldestPending: row.oldest === null ? null : new Date(row.oldest),
      holds: CURRENCIES.map((currency) => ({
        currency,
        outstanding: Number(open.find((r) => r.currency === currency)?.outstanding ?? '0'),
        reservedMinor: BigInt(reserved.find((r) => r.currency === currency)?.reserved ?? '0'),
      })),
      topUpsPending: CURRENCIES.map((currency) => ({ currency, count: Number(topUps.find((r) => r.currency === currency)?.n ?? '0') })),
      webhooks: { pending: Number(row.deliveries_pending), earliestDue: row.earliest_due === null ? null : new Date(row.earliest_due) },
    };
  }
}
