import { TestApp } from './test-app';

type Sql = Pick<TestApp, 'sql'>;

/**
 * A region's counter moved by hand, as a test of `cli verify` breaks it: `delta` added to
 * `column` in one of its slots (the first with room for it, so the slot's CHECK holds). Returns
 * what puts it back, in the same slot.
 */
export async function driftRegionCounter(t: Sql, regionId: string, column: 'used_gb' | 'vcpus_used', delta: number): Promise<() => Promise<void>> {
  const share = column === 'used_gb' ? 'gb_share' : 'vcpu_share';
  const [row] = await t.sql<{ slot: number }>(
    `WITH moved AS (
       UPDATE region_slots SET ${column} = ${column} + $2
        WHERE (region_id, slot) = (SELECT region_id, slot FROM region_slots WHERE region_id = $1 AND ${share} - ${column} >= $2 ORDER BY slot LIMIT 1)
        RETURNING slot)
     SELECT slot FROM moved`,
    [regionId, delta],
  );
  if (!row) throw new Error(`no slot of region ${regionId} has room for ${delta} more ${column}`);
  return async () => {
    await t.sql(`UPDATE region_slots SET ${column} = ${column} - $3 WHERE region_id = $1 AND slot = $2`, [regionId, row.slot, delta]);
  };
}

/**
 * Every IPv6 /64 of a region's /48 handed out (each slot's range used up), as in a region that
 * sold 65535 servers. Returns what gives them back.
 */
export async function exhaustRegionIpv6(t: Sql, regionId: string): Promise<() => Promise<void>> {
  const before = await t.sql<{ slot: number; next: number }>('SELECT slot, ipv6_next AS next FROM region_slots WHERE region_id = $1', [regionId]);
  await t.sql('UPDATE region_slots SET ipv6_next = ipv6_last + 1 WHERE region_id = $1', [regionId]);
  return async () => {
    await t.sql(
      `UPDATE region_slots s SET ipv6_next = b.next FROM jsonb_to_recordset($2::jsonb) AS b(slot smallint, next integer)
        WHERE s.region_id = $1 AND s.slot = b.slot`,
      [regionId, JSON.stringify(before)],
    );
  };
}
