import { Db } from '../../../shared/database/transaction';
import { SlotMismatch, regionSlotMismatches } from '../../options/infrastructure/region-capacity.sql';
import { Finding, InvariantCheck } from '../application/invariant-checks.port';

/**
 * The region vCPU invariant (servers.md): every region's `vcpus_used` equals the vCPUs of its
 * servers not deleted (seeded servers have none), with the vCPUs a plan change in flight has
 * reserved (resize_reserved_vcpus). It sums every server: never on a request path.
 */
export const REGION_VCPUS_USED_MISMATCHES = `
  SELECT r.id AS region_id, r.vcpus_used::text AS vcpus_used,
         COALESCE(sum(s.vcpus + s.resize_reserved_vcpus) FILTER (WHERE s.deleted_at IS NULL), 0)::text AS live_vcpus
    FROM region_usage r
    LEFT JOIN servers s ON s.region_id = r.id
   GROUP BY r.id, r.vcpus_used
  HAVING r.vcpus_used <> COALESCE(sum(s.vcpus + s.resize_reserved_vcpus) FILTER (WHERE s.deleted_at IS NULL), 0)
   ORDER BY r.id`;

export class RegionVcpusUsedCheck implements InvariantCheck {
  readonly name = 'regions.vcpus_used_matches_servers';
  readonly description = "Every region's vcpus_used counter equals the sum of vcpus (and vCPUs reserved by a plan change in flight) of its servers not deleted";

  constructor(private readonly db: Db) {}

  async findViolations(): Promise<Finding[]> {
    const rows = await this.db.query<{ region_id: string; vcpus_used: string; live_vcpus: string }>(REGION_VCPUS_USED_MISMATCHES);
    const slots = await this.db.query<SlotMismatch>(regionSlotMismatches('servers', 'vcpus_used', 'vcpus + resize_reserved_vcpus'));
    return [
      ...rows.map((r) => ({
        subject: r.region_id,
        message: `vcpus_used is ${r.vcpus_used} but its live servers hold ${r.live_vcpus} vCPUs`,
        details: { vcpus_used: r.vcpus_used, live_vcpus: r.live_vcpus },
      })),
      ...slots.map((r) => ({
        subject: r.region_id,
        message: `slot ${r.slot} counts ${r.counted} vCPUs but the live servers counted in it hold ${r.held}`,
        details: { slot: r.slot, vcpus_used: r.counted, live_vcpus: r.held },
      })),
    ];
  }
}
