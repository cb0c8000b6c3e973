import { Settings } from '../../../shared/config/settings';
import { Db } from '../../../shared/database/transaction';
import { Finding, InvariantCheck } from '../application/invariant-checks.port';

/** Unfinished operations of a volume / of a server (vm.* and template.*). */
const VOLUME_BUSY = `EXISTS (SELECT 1 FROM operations o WHERE o.volume_id = r.id AND o.status IN ('pending', 'running'))`;
const SERVER_BUSY = `EXISTS (SELECT 1 FROM operations o WHERE o.vm_id = r.id AND o.status IN ('pending', 'running') AND (o.type LIKE 'vm.%' OR o.type LIKE 'template.%'))`;
/** A reserved address's unfinished operation, or one of the server it is assigned to (its suspension waits for that server). */
const RESERVED_IP_BUSY = `(r.operation_id IS NOT NULL OR EXISTS (SELECT 1 FROM operations o WHERE o.vm_id = r.server_id AND o.status IN ('pending', 'running')))`;

/**
 * terms.md "verify": the term sweep meets its deadlines, for every prepaid kind that has terms
 * (servers, volumes, snapshots, server images, reserved IPv4 addresses). No live resource is more
 * than TERM_SWEEP_MS + 60 s past its `expires_at` while neither suspended nor under an operation
 * (a renewal decides first), and no suspended one more than that past its `release_at`. A
 * reserved address assigned to a server with an unfinished operation waits for it (its
 * suspension is an ip.unassign of that server, accepted once the server is free).
 */
export class TermDeadlinesCheck implements InvariantCheck {
  readonly name = 'terms.deadlines_met';
  readonly description = 'No live server, volume, snapshot, image or reserved IP is left unsuspended past expires_at, nor suspended past release_at, by more than TERM_SWEEP_MS + 60 s';

  constructor(
    private readonly db: Db,
    private readonly settings: Settings,
  ) {}

  async findViolations(): Promise<Finding[]> {
    const grace = Math.ceil(this.settings.termSweepMs / 1000) + 60;
    const rows = await this.db.query<{ id: string; org_id: string; status: string; deadline: Date; kind: string }>(
      `SELECT r.id, r.org_id, r.status, r.expires_at AS deadline, 'expires_at' AS kind FROM volumes r
        WHERE r.status IN ('available', 'attached') AND r.expires_at < now() - make_interval(secs => $1::int) AND NOT ${VOLUME_BUSY}
       UNION ALL
       SELECT r.id, r.org_id, r.status, r.expires_at, 'expires_at' FROM servers r
        WHERE r.status IN ('running', 'stopped') AND r.expires_at < now() - make_interval(secs => $1::int) AND NOT ${SERVER_BUSY}
       UNION ALL
       SELECT r.id, r.org_id, r.status, r.release_at, 'release_at' FROM volumes r
        WHERE r.status = 'suspended' AND r.release_at < now() - make_interval(secs => $1::int) AND NOT ${VOLUME_BUSY}
       UNION ALL
       SELECT r.id, r.org_id, r.status, r.release_at, 'release_at' FROM servers r
        WHERE r.status = 'suspended' AND r.release_at < now() - make_interval(secs => $1::int) AND NOT ${SERVER_BUSY}
       UNION ALL
       SELECT r.id, r.org_id, r.status, CASE WHEN r.status = 'suspended' THEN r.release_at ELSE r.expires_at END,
              CASE WHEN r.status = 'suspended' THEN 'release_at' ELSE 'expires_at' END FROM snapshots r
        WHERE ((r.status = 'available' AND r.expires_at < now() - make_interval(secs => $1::int))
               OR (r.status = 'suspended' AND r.release_at < now() - make_interval(secs => $1::int))) AND r.operation_id IS NULL
       UNION ALL
       SELECT r.id, r.org_id, r.status, CASE WHEN r.status = 'suspended' THEN r.release_at ELSE r.expires_at END,
              CASE WHEN r.status = 'suspended' THEN 'release_at' ELSE 'expires_at' END FROM server_images r
        WHERE ((r.status = 'available' AND r.expires_at < now() - make_interval(secs => $1::int))
               OR (r.status = 'suspended' AND r.release_at < now() - make_interval(secs => $1::int))) AND r.operation_id IS NULL
       UNION ALL
       SELECT r.id, r.org_id, r.status, CASE WHEN r.status = 'suspended' THEN r.release_at ELSE r.expires_at END,
              CASE WHEN r.status = 'suspended' THEN 'release_at' ELSE 'expires_at' END FROM reserved_ips r
        WHERE ((r.status IN ('available', 'assigned') AND r.expires_at < now() - make_interval(secs => $1::int))
               OR (r.status = 'suspended' AND r.release_at < now() - make_interval(secs => $1::int))) AND NOT ${RESERVED_IP_BUSY}
       ORDER BY 1 LIMIT 1000`,
      [grace],
    );
    return rows.map((r) => ({
      subject: r.id,
      message: `${r.status} past its ${r.kind} (${r.deadline.toISOString()}) by more than ${grace} s`,
      details: { org_id: r.org_id, status: r.status, [r.kind]: r.deadline.toISOString() },
    }));
  }
}

/** A suspended volume whose volume.suspend ended is attached to nothing (its suspension detached it). */
export class SuspendedVolumeDetachedCheck implements InvariantCheck {
  readonly name = 'terms.suspended_volume_detached';
  readonly description = 'A suspended volume with no operation in flight is attached to no server';

  constructor(private readonly db: Db) {}

  async findViolations(): Promise<Finding[]> {
    const rows = await this.db.query<{ id: string; org_id: string; server_id: string }>(
      `SELECT r.id, r.org_id, r.server_id FROM volumes r WHERE r.status = 'suspended' AND r.server_id IS NOT NULL AND NOT ${VOLUME_BUSY} ORDER BY r.id`,
    );
    return rows.map((r) => ({ subject: r.id, message: `suspended volume is still attached to server ${r.server_id}`, details: { org_id: r.org_id, server_id: r.server_id } }));
  }
}

/**
 * terms.md "verify": at most one automatic renewal accepted per (resource, expires_at), each the
 * renewal operation of its own resource, and every renewal audited as automatic (actor system,
 * `data.auto`) recorded as an accepted attempt.
 */
export class AutoRenewOncePerTermCheck implements InvariantCheck {
  readonly name = 'terms.auto_renew_once_per_term';
  readonly description = 'At most one automatic renewal accepted per resource and term end, each a renewal operation of that resource, and every automatic renewal recorded';

  constructor(private readonly db: Db) {}

  async findViolations(): Promise<Finding[]> {
    const rows = await this.db.query<{ subject: string; org_id: string; problem: string; detail: string }>(
      `SELECT t.resource_id AS subject, min(t.org_id) AS org_id, 'twice' AS problem, t.expires_at::text AS detail FROM auto_renew_attempts t
        WHERE t.outcome = 'accepted' GROUP BY t.resource_id, t.expires_at HAVING count(*) > 1
       UNION ALL
       SELECT t.resource_id, t.org_id, 'not_its_renewal', t.operation_id FROM auto_renew_attempts t JOIN operations o ON o.id = t.operation_id
        WHERE t.outcome = 'accepted' AND NOT ((o.type = 'volume.renew' AND o.volume_id = t.resource_id) OR (o.type = 'vm.renew' AND o.vm_id = t.resource_id))
       UNION ALL
       SELECT a.target_id, a.org_id, 'unrecorded', a.data->>'operation_id' FROM audit_log a
        WHERE a.action IN ('server.renew', 'volume.renew') AND a.actor_type = 'system' AND a.data->>'auto' = 'true'
          AND NOT EXISTS (SELECT 1 FROM auto_renew_attempts t WHERE t.operation_id = a.data->>'operation_id' AND t.outcome = 'accepted')
       ORDER BY 1 LIMIT 1000`,
    );
    const say: Record<string, (d: string) => string> = {
      twice: (d) => `more than one automatic renewal accepted for the term ending ${d}`,
      not_its_renewal: (d) => `automatic renewal names operation ${d}, which is not a renewal of this resource`,
      unrecorded: (d) => `automatic renewal ${d} is audited but not recorded as an accepted attempt`,
    };
    return rows.map((r) => ({ subject: r.subject, message: say[r.problem](r.detail), details: { org_id: r.org_id, problem: r.problem } }));
  }
}
