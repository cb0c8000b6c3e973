import { DataSource } from 'typeorm';
import { organization, region } from '../support/fixtures';
import { TestApp, startTestApp } from '../support/test-app';

async function sqlError(work: () => Promise<unknown>): Promise<{ code: string; constraint: string | undefined }> {
  try {
    await work();
  } catch (err) {
    const e = err as { driverError?: { code: string; constraint?: string }; code?: string; constraint?: string };
    return { code: e.driverError?.code ?? e.code ?? '?', constraint: e.driverError?.constraint ?? e.constraint };
  }
  throw new Error('the statement was accepted');
}

/**
 * Migration 1764000000211 on rows that existed before it (seeded servers of any name), and the
 * database's own guards on servers: the hostname rule, one live server per name and organization,
 * one live server per ipv4, deleted_at implying `deleted` without an ipv4.
 */
describe('servers in the database', () => {
  let t: TestApp;
  const insertServer = (id: string, org: string, name: string, extra: { deleted?: boolean; createdAt?: string } = {}) =>
    t.sql(
      `INSERT INTO servers (id, org_id, name, region_id, zone_id, created_at, deleted_at) VALUES ($1, $2, $3, 'id-jkt', 'id-jkt-a', $4, $5)`,
      [id, org, name, extra.createdAt ?? '2026-11-01T00:00:00Z', extra.deleted ? '2026-11-02T00:00:00Z' : null],
    );

  beforeAll(async () => {
    t = await startTestApp();
    await t.seed({ regions: [region()], organizations: [organization('ssc', { servers: [], volumes: [] }), organization('sscx', { servers: [], volumes: [] })] });
  });
  afterAll(async () => t?.close());

  it('the migration converts existing servers: running (deleted when deleted), an ipv4 each live one, valid unique names', async () => {
    const ds = t.app.get(DataSource);
    // Undo the migrations that came after it (their down() runs too), then it.
    const last = async (): Promise<string> => (await t.sql<{ name: string }>(`SELECT name FROM schema_migrations ORDER BY id DESC LIMIT 1`))[0].name;
    const later = (await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM schema_migrations WHERE timestamp > 1764000000211`))[0].n;
    for (let i = 0; i < later; i++) await ds.undoLastMigration({ transaction: 'all' });
    expect(await last()).toBe('Servers1764000000211');
    await ds.undoLastMigration({ transaction: 'all' });
    try {
      expect(
        await t.sql(`SELECT count(*)::int AS n FROM information_schema.columns WHERE table_name = 'servers' AND column_name = 'status' AND table_schema = current_schema()`),
      ).toEqual([{ n: 0 }]);
      await insertServer('vm_old1', 'org_ssc', 'web 1');
      await insertServer('vm_old2', 'org_ssc', '-lead.');
      await insertServer('vm_old3', 'org_ssc', '__');
      await insertServer('vm_old4', 'org_ssc', 'x'.repeat(70));
      await insertServer('vm_old5', 'org_ssc', 'db_1');
      await insertServer('vm_dupa', 'org_ssc', 'dup', { createdAt: '2026-10-01T00:00:00Z' });
      await insertServer('vm_dupb', 'org_ssc', 'dup', { createdAt: '2026-10-02T00:00:00Z' });
      await insertServer('vm_dupgone', 'org_ssc', 'dup', { deleted: true, createdAt: '2026-09-01T00:00:00Z' });
      await insertServer('vm_dupx', 'org_sscx', 'dup');
    } finally {
      await ds.runMigrations({ transaction: 'all' });
    }
    const rows = await t.sql<{ id: string; name: string; status: string; ipv4: string | null; labels: object; delete_protection: boolean }>(
      `SELECT id, name, status, ipv4, labels, delete_protection FROM servers ORDER BY id`,
    );
    const byId = Object.fromEntries(rows.map((r) => [r.id, r]));
    expect(Object.fromEntries(rows.map((r) => [r.id, r.name]))).toEqual({
      vm_old1: 'web-1',
      vm_old2: 'lead',
      vm_old3: 'server',
      vm_old4: 'x'.repeat(63),
      vm_old5: 'db-1',
      vm_dupa: 'dup',
      vm_dupb: `dup-${(await t.sql<{ h: string }>(`SELECT left(md5('vm_dupb'), 8) AS h`))[0].h}`,
      vm_dupgone: 'dup',
      vm_dupx: 'dup',
    });
    for (const r of rows) {
      if (r.id === 'vm_dupgone') expect(r).toMatchObject({ status: 'deleted', ipv4: null });
      else expect({ id: r.id, status: r.status, ipv4: r.ipv4 }).toEqual({ id: r.id, status: 'running', ipv4: expect.stringMatching(/^100\.64\.0\.\d+$/) });
      expect({ labels: r.labels, delete_protection: r.delete_protection }).toEqual({ labels: {}, delete_protection: false });
    }
    expect(new Set(rows.map((r) => r.ipv4)).size).toBe(rows.length);
    expect(byId.vm_old1.ipv4).not.toBe(byId.vm_old2.ipv4);
  });

  it('refuses a bad name, a second live server of the name, a second live server of an ipv4; deleting frees both', async () => {
    expect(await sqlError(() => insertServer('vm_bad', 'org_ssc', 'bad_name'))).toEqual({ code: '23514', constraint: 'servers_name_valid' });
    expect(await sqlError(() => insertServer('vm_dup2', 'org_ssc', 'web-1'))).toEqual({ code: '23505', constraint: 'servers_org_name_live_key' });
    const [{ ipv4 }] = await t.sql<{ ipv4: string }>(`SELECT ipv4 FROM servers WHERE id = 'vm_old1'`);
    expect(
      await sqlError(() => t.sql(`UPDATE servers SET ipv4 = $1 WHERE id = 'vm_old2'`, [ipv4])),
    ).toEqual({ code: '23505', constraint: 'servers_ipv4_live_key' });
    await t.sql(`UPDATE servers SET deleted_at = now() WHERE id = 'vm_old1'`);
    expect(await t.sql(`SELECT status, ipv4 FROM servers WHERE id = 'vm_old1'`)).toEqual([{ status: 'deleted', ipv4: null }]);
    await insertServer('vm_new1', 'org_ssc', 'web-1');
    expect(await t.sql(`SELECT status FROM servers WHERE id = 'vm_new1' AND ipv4 IS NOT NULL`)).toEqual([{ status: 'running' }]);
  });
});
