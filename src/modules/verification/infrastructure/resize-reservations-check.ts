import { Db } from '../../../shared/database/transaction';
import { Finding, InvariantCheck } from '../application/invariant-checks.port';

/**
 * What a resize reserves lives only as long as the resize: a volume with gigabytes reserved
 * (resize_reserved_gb) has an unfinished volume.resize, a server with vCPUs reserved
 * (resize_reserved_vcpus) an unfinished vm.resize. A reservation left behind holds capacity
 * nothing uses (a failed resize whose disk or instance the provider could not be asked about).
 */
export class ResizeReservationsCheck implements InvariantCheck {
  readonly name = 'resizes.reservations_in_flight';
  readonly description = 'Every capacity or vCPU reservation of a resize belongs to an unfinished volume.resize or vm.resize of its resource';

  constructor(private readonly db: Db) {}

  async findViolations(): Promise<Finding[]> {
    const rows = await this.db.query<{ id: string; kind: string; reserved: number }>(
      `SELECT v.id, 'volume' AS kind, v.resize_reserved_gb AS reserved FROM volumes v
        WHERE v.resize_reserved_gb > 0 AND v.deleted_at IS NULL
          AND NOT EXISTS (SELECT 1 FROM operations o WHERE o.volume_id = v.id AND o.type = 'volume.resize' AND o.status IN ('pending', 'running'))
       UNION ALL
       SELECT s.id, 'server' AS kind, s.resize_reserved_vcpus AS reserved FROM servers s
        WHERE s.resize_reserved_vcpus > 0 AND s.deleted_at IS NULL
          AND NOT EXISTS (SELECT 1 FROM operations o WHERE o.vm_id = s.id AND o.type = 'vm.resize' AND o.status IN ('pending', 'running'))
        ORDER BY 1`,
    );
    return rows.map((r) => ({
      subject: r.id,
      message: r.kind === 'volume' ? `${r.reserved} GB reserved for a resize that is not in flight` : `${r.reserved} vCPUs reserved for a plan change that is not in flight`,
      details: { kind: r.kind, reserved: r.reserved },
    }));
  }
}
