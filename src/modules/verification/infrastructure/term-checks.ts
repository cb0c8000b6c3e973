import { Settings } from '../../../shared/config/settings';
import { Db } from '../../../shared/database/transaction';
import { Finding, InvariantCheck } from '../application/invariant-checks.port';

/** Unfinished operations of a volume / of a server (vm.* and template.*). */
const VOLUME_BUSY = `EXISTS (SELECT 1 FROM operations o WHERE o.volume_id = r.id AND o.status IN ('pending', 'running'))`;
const SERVER_BUSY = `EXISTS (SELECT 1 FROM operations o WHERE o.vm_id = r.id AND o.status IN ('pending', 'running') AND (o.type LIKE 'vm.%' OR o.type LIKE 'template.%'))`;

/**
 * terms.md "verify": the term sweep meets its deadlines. No live resource is more than
 * TERM_SWEEP_MS + 60 s past its `expires_at` while neither suspended nor under an operation (a
 * renewal decides first), and no suspended one more than that past its `release_at`.
 */
export class TermDeadlinesCheck implements InvariantCheck {
  readonly name = 'terms.deadlines_met';
  readonly description = 'No live server or volume is left unsuspended past expires_at, nor suspended past release_at, by more than TERM_SWEEP_MS + 60 s';

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
