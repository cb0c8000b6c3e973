import { Db } from './transaction';

/**
 * What the orphan sweeps ask the service (OrphanSweep): of `ids`, those whose row in `table` is
 * deleted (`deleted_at` set) or absent, and that no unfinished operation names, `naming` being
 * the SQL condition on the operation `o` and the id `x.id` (e.g. `o.volume_id = x.id`). In id
 * order. A constant of the code, never a caller's input, is written into the SQL.
 */
export async function goneAmong(db: Db, table: string, naming: string, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db.query<{ id: string }>(
    `SELECT x.id FROM unnest($1::text[]) AS x(id)
       LEFT JOIN ${table} r ON r.id = x.id
      WHERE (r.id IS NULL OR r.deleted_at IS NOT NULL)
        AND NOT EXISTS (SELECT 1 FROM operations o WHERE ${naming} AND o.status IN ('pending', 'running'))
      ORDER BY x.id`,
    [ids],
  );
  return rows.map((r) => r.id);
}
