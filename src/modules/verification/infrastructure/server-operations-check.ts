import { Db } from '../../../shared/database/transaction';
import { Finding, InvariantCheck } from '../application/invariant-checks.port';

/**
 * servers.md: one unfinished vm.* or template.* operation per server (the unique partial index
 * operations_one_unfinished_server_op is the rule; this reads what the table holds).
 */
export class OneUnfinishedServerOperationCheck implements InvariantCheck {
  readonly name = 'servers.one_unfinished_operation';
  readonly description = 'No server has two unfinished (pending or running) vm.* or template.* operations';

  constructor(private readonly db: Db) {}

  async findViolations(): Promise<Finding[]> {
    const rows = await this.db.query<{ vm_id: string; ids: string[] }>(
      `SELECT vm_id, array_agg(id ORDER BY id) AS ids FROM operations
        WHERE status IN ('pending', 'running') AND vm_id IS NOT NULL AND (type LIKE 'vm.%' OR type LIKE 'template.%')
        GROUP BY vm_id HAVING count(*) > 1 ORDER BY vm_id`,
    );
    return rows.map((r) => ({ subject: r.vm_id, message: `server has ${r.ids.length} unfinished operations: ${r.ids.join(', ')}`, details: { operation_ids: r.ids.join(',') } }));
  }
}

/**
 * A succeeded purchase of a server was paid exactly once: its vm.create operation has one hold
 * and one capture of the purchase's amount (none when the price was zero), and no release; its
 * server was made running with an address (or was deleted since).
 */
export class ServerPurchasesCapturedOnceCheck implements InvariantCheck {
  readonly name = 'servers.purchase_captured_once';
  readonly description = 'Every succeeded vm.create holds and captures its amount exactly once, releases nothing, and its server got an ipv4 (or was deleted since)';

  constructor(private readonly db: Db) {}

  async findViolations(): Promise<Finding[]> {
    const rows = await this.db.query<{ id: string; vm_id: string; amount: string; holds: number; captures: number; releases: number; captured: string; ipv4_ok: boolean }>(
      `SELECT o.id, o.vm_id, s.billing_amount::text AS amount,
              count(*) FILTER (WHERE l.kind = 'hold')::int AS holds,
              count(*) FILTER (WHERE l.kind = 'capture')::int AS captures,
              count(*) FILTER (WHERE l.kind = 'release')::int AS releases,
              coalesce(sum(l.amount) FILTER (WHERE l.kind = 'capture'), 0)::text AS captured,
              (s.ipv4 IS NOT NULL OR s.deleted_at IS NOT NULL) AS ipv4_ok
         FROM operations o
         JOIN servers s ON s.id = o.vm_id
         LEFT JOIN wallet_ledger l ON l.operation_id = o.id
        WHERE o.type = 'vm.create' AND o.status = 'succeeded'
        GROUP BY o.id, o.vm_id, s.billing_amount, s.ipv4, s.deleted_at
       HAVING NOT (s.ipv4 IS NOT NULL OR s.deleted_at IS NOT NULL)
           OR count(*) FILTER (WHERE l.kind = 'release') > 0
           OR (CASE WHEN (o.params->>'amount') IN ('0', '0.00000') THEN count(*) FILTER (WHERE l.kind = 'capture') <> 0
                    ELSE count(*) FILTER (WHERE l.kind = 'capture') <> 1 OR count(*) FILTER (WHERE l.kind = 'hold') <> 1
                         OR sum(l.amount) FILTER (WHERE l.kind = 'capture') <> sum(l.amount) FILTER (WHERE l.kind = 'hold') END)
        ORDER BY o.id`,
    );
    return rows.map((r) => ({
      subject: r.id,
      message: `vm.create of ${r.vm_id}: ${r.holds} holds, ${r.captures} captures (${r.captured}), ${r.releases} releases${r.ipv4_ok ? '' : ', and its live server has no ipv4'}`,
      details: { server_id: r.vm_id, holds: r.holds, captures: r.captures, releases: r.releases, captured: r.captured },
    }));
  }
}
