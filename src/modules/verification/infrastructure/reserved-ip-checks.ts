import { Db } from '../../../shared/database/transaction';
import { ComputeProvider, ComputeUnavailable } from '../../servers/application/compute-provider.port';
import { Finding, InvariantCheck } from '../application/invariant-checks.port';

/**
 * No address is held twice: each live (not released) reservation's address is one row of its
 * region's pool naming that reservation, and every pool row naming a reservation names a live one
 * with that address; no server holds two reservations.
 */
export class ReservedIpsHeldOnceCheck implements InvariantCheck {
  readonly name = 'reserved_ips.held_once';
  readonly description = "Each live reserved address is its pool row's holder, in its region, and no address or server is held by two live reservations";

  constructor(private readonly db: Db) {}

  async findViolations(): Promise<Finding[]> {
    const rows = await this.db.query<{ subject: string; message: string; org_id: string | null }>(
      `SELECT r.id AS subject, r.org_id, 'live reservation of ' || host(r.ip) || ' is not its pool row''s holder' AS message
         FROM reserved_ips r LEFT JOIN reserved_ip_pool p ON p.ip = r.ip
        WHERE r.status <> 'released' AND (p.ip IS NULL OR p.reserved_ip_id IS DISTINCT FROM r.id OR p.region_id <> r.region_id)
       UNION ALL
       SELECT host(p.ip), NULL, 'pool address is held by ' || p.reserved_ip_id || ', which is not a live reservation of it'
         FROM reserved_ip_pool p LEFT JOIN reserved_ips r ON r.id = p.reserved_ip_id AND r.ip = p.ip AND r.status <> 'released'
        WHERE p.reserved_ip_id IS NOT NULL AND r.id IS NULL
       UNION ALL
       SELECT host(ip), NULL, count(*) || ' live reservations hold this address'
         FROM reserved_ips WHERE status <> 'released' GROUP BY ip HAVING count(*) > 1
       UNION ALL
       SELECT s, NULL, count(*) || ' reservations are assigned to (or being assigned to) this server'
         FROM (SELECT server_id AS s FROM reserved_ips WHERE server_id IS NOT NULL
               UNION ALL SELECT pending_server_id FROM reserved_ips WHERE pending_server_id IS NOT NULL AND pending_server_id IS DISTINCT FROM server_id) x
        GROUP BY s HAVING count(*) > 1
       ORDER BY 1`,
    );
    return rows.map((r) => ({ subject: r.subject, message: r.message, details: r.org_id ? { org_id: r.org_id } : ({} as Record<string, string>) }));
  }
}

/**
 * Reserved addresses are charged once per term: every reservation past allocating (not a failed
 * purchase) has one ip.reserve operation, succeeded, with one hold and one capture; every
 * succeeded ip.renew one hold and one capture; no assignment, unassignment or release is charged.
 */
export class ReservedIpsChargedOnceCheck implements InvariantCheck {
  readonly name = 'reserved_ips.charged_once';
  readonly description = 'Every reservation (not a failed purchase) has one succeeded ip.reserve with one hold and one capture; each succeeded ip.renew one of each; other ip.* operations none';

  constructor(private readonly db: Db) {}

  async findViolations(): Promise<Finding[]> {
    const rows = await this.db.query<{ subject: string; org_id: string; message: string }>(
      `SELECT r.id AS subject, r.org_id,
              r.status || ' reservation has ' || count(DISTINCT o.id) || ' ip.reserve operation(s) (' ||
              count(DISTINCT o.id) FILTER (WHERE o.status = 'succeeded') || ' succeeded), ' ||
              count(l.id) FILTER (WHERE l.kind = 'hold') || ' hold(s) and ' || count(l.id) FILTER (WHERE l.kind = 'capture') || ' capture(s); expected 1, 1, 1, 1' AS message
         FROM reserved_ips r
         LEFT JOIN operations o ON o.type = 'ip.reserve' AND o.params->>'reserved_ip_id' = r.id
         LEFT JOIN wallet_ledger l ON l.operation_id = o.id
        WHERE r.status <> 'allocating' AND r.released_reason IS DISTINCT FROM 'purchase_failed'
        GROUP BY r.id, r.org_id, r.status
       HAVING NOT (count(DISTINCT o.id) = 1 AND count(DISTINCT o.id) FILTER (WHERE o.status = 'succeeded') = 1
                   AND count(l.id) FILTER (WHERE l.kind = 'capture') = 1 AND count(l.id) FILTER (WHERE l.kind = 'hold') = 1)
       UNION ALL
       SELECT o.id, o.org_id, o.type || ' ' || o.status || ' has ' || count(l.id) FILTER (WHERE l.kind = 'hold') || ' hold(s) and ' ||
              count(l.id) FILTER (WHERE l.kind = 'capture') || ' capture(s)'
         FROM operations o LEFT JOIN wallet_ledger l ON l.operation_id = o.id
        WHERE o.type IN ('ip.renew', 'ip.assign', 'ip.unassign', 'ip.release')
        GROUP BY o.id, o.org_id, o.type, o.status
       HAVING (o.type = 'ip.renew' AND o.status = 'succeeded'
               AND NOT (count(l.id) FILTER (WHERE l.kind = 'hold') = 1 AND count(l.id) FILTER (WHERE l.kind = 'capture') = 1))
           OR (o.type <> 'ip.renew' AND count(l.id) > 0)
       ORDER BY 1`,
    );
    return rows.map((r) => ({ subject: r.subject, message: r.message, details: { org_id: r.org_id } }));
  }
}

/**
 * Every assignment is the same in the database and at the compute provider: a settled reservation
 * (no operation in flight) assigned to a server here is routed to it there, one assigned to
 * nothing is routed to nothing, and the provider routes no address of a released or unknown
 * reservation.
 */
export class ProviderReservedIpsCheck implements InvariantCheck {
  readonly name = 'reserved_ips.assignments_match';
  readonly description = 'Every settled reservation is routed at the compute provider to the server it is assigned to here (or to nothing); no released or unknown one is routed';

  constructor(
    private readonly db: Db,
    private readonly compute: ComputeProvider,
  ) {}

  async findViolations(): Promise<Finding[]> {
    let routed: Map<string, string | null>;
    try {
      routed = new Map((await this.compute.listAssignedAddresses()).map((a) => [a.addressId, a.serverId]));
    } catch (err) {
      if (!(err instanceof ComputeUnavailable)) throw err;
      return [{ subject: 'provider', message: `the compute provider could not list its addresses: ${err.message}`, details: {} }];
    }
    const rows = await this.db.query<{ id: string; org_id: string; status: string; server_id: string | null; busy: boolean }>(
      `SELECT id, org_id, status, server_id, operation_id IS NOT NULL AS busy FROM reserved_ips
        WHERE status IN ('available', 'assigned', 'suspended') OR id = ANY($1::text[]) ORDER BY id`,
      [[...routed.keys()]],
    );
    const found: Finding[] = [];
    const known = new Set<string>();
    for (const r of rows) {
      known.add(r.id);
      if (r.busy || r.status === 'allocating') continue;
      const there = routed.get(r.id) ?? null;
      if (r.status === 'released') {
        if (there !== null) found.push({ subject: r.id, message: `released, routed to server ${there} at the compute provider`, details: { org_id: r.org_id } });
        continue;
      }
      if (there === r.server_id) continue;
      const here = r.server_id ? `assigned to server ${r.server_id} here` : 'assigned to nothing here';
      const at = there ? `routed to server ${there} at the compute provider` : 'routed to nothing at the compute provider';
      found.push({ subject: r.id, message: `${here}, ${at}`, details: { org_id: r.org_id } });
    }
    for (const id of routed.keys()) {
      if (!known.has(id)) found.push({ subject: id, message: 'the compute provider routes an address of no known reservation', details: {} });
    }
    return found;
  }
}
