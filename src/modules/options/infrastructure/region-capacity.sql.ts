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
    FROM region_usage r
    LEFT JOIN volumes v ON v.region_id = r.id
   GROUP BY r.id, r.used_gb
  HAVING r.used_gb <> COALESCE(sum(v.size_gb + v.resize_reserved_gb) FILTER (WHERE v.deleted_at IS NULL), 0)
   ORDER BY r.id`;

/**
 * A region's counters live in its slots (region_slots): each live disk or server is counted in the
 * slot its row names (`region_slot`), where its deletion gives the room back. This query returns
 * the slots whose counter is not what their live rows hold, in the regions whose totals agree
 * (a region whose total is off is named by the total's check): `column` is the slot's counter,
 * `amount` what a live row holds of it.
 */
export const regionSlotMismatches = (table: 'volumes' | 'servers', column: 'used_gb' | 'vcpus_used', amount: string): string => `
  WITH live AS (
    SELECT region_id, region_slot AS slot, sum(${amount}) AS held FROM ${table} WHERE deleted_at IS NULL GROUP BY region_id, region_slot
  ), slots AS (
    SELECT s.region_id, s.slot, s.${column} AS counted, coalesce(l.held, 0) AS held
      FROM region_slots s LEFT JOIN live l ON l.region_id = s.region_id AND l.slot = s.slot
  ), totals AS (
    SELECT region_id FROM slots GROUP BY region_id HAVING sum(counted) = sum(held)
  )
  SELECT s.region_id, s.slot, s.counted::text AS counted, s.held::text AS held
    FROM slots s JOIN totals t ON t.region_id = s.region_id
   WHERE s.counted <> s.held
   ORDER BY s.region_id, s.slot`;

/** A row of regionSlotMismatches. */
export interface SlotMismatch {
  region_id: string;
  slot: number;
  counted: string;
  held: string;
}
