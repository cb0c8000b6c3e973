import { Db } from '../../../shared/database/transaction';
import { Finding, InvariantCheck } from '../application/invariant-checks.port';

/**
 * The region vCPU invariant (servers.md): every region's `vcpus_used` equals the vCPUs of its
 * servers not deleted (seeded servers have none), with the vCPUs a plan change in flight has
 * reserved (resize_reserved_vcpus). It sums every server: never on a request path.
 */
export const REGION_VCPUS_USED_MISMATCHES = `
  SELECT r.id AS region_id, r.vcpus_used::text AS vcpus_used,
         COALESCE(sum(s.vcpus + s.resize_reserved_vcpus) FILTER (WHERE s.deleted_at IS NULL), 0)::text AS live_vcpus
    FROM regions r
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
    return rows.map((r) => ({
      subject: r.region_id,
      message: `vcpus_used is ${r.vcpus_used} but its live servers hold ${r.live_vcpus} vCPUs`,
      details: { vcpus_used: r.vcpus_used, live_vcpus: r.live_vcpus },
    }));
  }
}
