/**
 * The region capacity invariant (lifecycle.md "Region capacity is a counter"): every region's
 * `used_gb` equals the sum of `size_gb` (and `resize_reserved_gb`, what a resize in flight added) of
 * its live volumes (deleted_at IS NULL). This query
 * returns the regions that break it, with both figures; none when it holds. For `cli verify`
 * (named check `region_used_gb`) and the e2e tests. It sums every volume: never on a request path.
 */
export const REGION_USED_GB_MISMATCHES = `
  SELECT r.id AS region_id, r.used_gb::text AS used_gb,
         COALESCE(sum(v.size_gb + v.resize_reserved_gb) FILTER (WHERE v.deleted_at IS NULL), 0)::text AS live_gb
    FROM regions r
    LEFT JOIN volumes v ON v.region_id = r.id
   GROUP BY r.id, r.used_gb
  HAVING r.used_gb <> COALESCE(sum(v.size_gb + v.resize_reserved_gb) FILTER (WHERE v.deleted_at IS NULL), 0)
   ORDER BY r.id`;
