import { DataSource } from 'typeorm';
import { UnitOfWork } from '../../src/shared/database/unit-of-work';
import { QuoteRepository } from '../../src/modules/volumes/application/quotes.port';
import { organization, region } from '../support/fixtures';
import { asyncRefusal } from '../support/assertions';
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
 * Migration 1764000000120 and the database's own guards for lifecycle.md "Volume, extended" and
 * quotes: existing names made valid and unique, CHECKs on names and labels, the unique index on
 * live names, the quote's exact amount and single use. Seed files follow the same rules.
 */
describe('volume names, labels and quotes in the database', () => {
  let t: TestApp;
  const insertVolume = (id: string, org: string, name: string, extra: { deleted?: boolean; createdAt?: string; labels?: string } = {}) =>
    t.sql(
      `INSERT INTO volumes (id, org_id, name, status, type, region_id, zone_id, size_gb, term_months, billing_currency, billing_amount,
                            price_usd_minor, price_idr_minor, expires_at, created_at, deleted_at${extra.labels ? ', labels' : ''})
       VALUES ($1, $2, $3, $4, 'premium', 'id-jkt', 'id-jkt-a', 10, 1, 'USD', 0, 0, 0, now(), $5, $6${extra.labels ? ', $7' : ''})`,
      [id, org, name, extra.deleted ? 'deleted' : 'available', extra.createdAt ?? '2026-11-01T00:00:00Z', extra.deleted ? '2026-11-02T00:00:00Z' : null, ...(extra.labels ? [extra.labels] : [])],
    );

  beforeAll(async () => {
    t = await startTestApp();
    await t.seed({ regions: [region()], organizations: [organization('sch', { volumes: [] }), organization('schx', { volumes: [] })] });
  });
  afterAll(async () => t?.close());

  it('the migration turns existing names into valid ones and keeps the oldest of a duplicated live name', async () => {
    const ds = t.app.get(DataSource);
    // Back to the schema before this migration (later migrations are undone first, then re-applied).
    for (;;) {
      const [{ name }] = await t.sql<{ name: string }>(`SELECT name FROM schema_migrations ORDER BY id DESC LIMIT 1`);
      await ds.undoLastMigration({ transaction: 'all' });
      if (name === 'VolumeLabelsAndQuotes1764000000120') break;
    }
    try {
      expect(await t.sql(`SELECT count(*)::int AS n FROM information_schema.columns WHERE table_name = 'volumes' AND column_name = 'labels' AND table_schema = current_schema()`)).toEqual([{ n: 0 }]);
      await insertVolume('vol_old1', 'org_sch', 'data 1');
      await insertVolume('vol_old2', 'org_sch', '-lead');
      await insertVolume('vol_old3', 'org_sch', '');
      await insertVolume('vol_old4', 'org_sch', 'x'.repeat(70));
      await insertVolume('vol_dupa', 'org_sch', 'dup', { createdAt: '2026-10-01T00:00:00Z' });
      await insertVolume('vol_dupb', 'org_sch', 'dup', { createdAt: '2026-10-02T00:00:00Z' });
      await insertVolume('vol_dupc', 'org_sch', 'dup', { createdAt: '2026-10-03T00:00:00Z' });
      await insertVolume('vol_dupgone', 'org_sch', 'dup', { deleted: true, createdAt: '2026-09-01T00:00:00Z' });
      await insertVolume('vol_dupx', 'org_schx', 'dup');
    } finally {
      await ds.runMigrations({ transaction: 'all' });
    }
    expect(await t.sql(`SELECT id, name, labels, delete_protection FROM volumes WHERE id LIKE 'vol_old%' OR id LIKE 'vol_dup%' ORDER BY id`)).toEqual([
      { id: 'vol_dupa', name: 'dup', labels: {}, delete_protection: false },
      { id: 'vol_dupb', name: 'dup-dupb', labels: {}, delete_protection: false },
      { id: 'vol_dupc', name: 'dup-dupc', labels: {}, delete_protection: false },
      { id: 'vol_dupgone', name: 'dup', labels: {}, delete_protection: false },
      { id: 'vol_dupx', name: 'dup', labels: {}, delete_protection: false },
      { id: 'vol_old1', name: 'data-1', labels: {}, delete_protection: false },
      { id: 'vol_old2', name: 'vlead', labels: {}, delete_protection: false },
      { id: 'vol_old3', name: 'volume', labels: {}, delete_protection: false },
      { id: 'vol_old4', name: 'x'.repeat(64), labels: {}, delete_protection: false },
    ]);
  });

  it('refuses a bad name or bad labels (CHECK), and a second live volume of the name (unique index); deleted ones do not count', async () => {
    const check = { code: '23514', constraint: undefined as string | undefined };
    expect(await sqlError(() => insertVolume('vol_bad1', 'org_sch', 'bad name'))).toEqual({ ...check, constraint: 'volumes_name_valid' });
    expect(await sqlError(() => insertVolume('vol_bad2', 'org_sch', 'x'.repeat(65)))).toEqual({ ...check, constraint: 'volumes_name_valid' });
    for (const labels of ['[]', '"x"', '{"Env": "x"}', '{"a": 1}', `{"a": "${'v'.repeat(256)}"}`, JSON.stringify(Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, 'v'])))]) {
      expect([labels.slice(0, 20), await sqlError(() => insertVolume('vol_bad3', 'org_sch', 'okname', { labels }))]).toEqual([
        labels.slice(0, 20),
        { ...check, constraint: 'volumes_labels_valid' },
      ]);
    }
    await insertVolume('vol_good', 'org_sch', 'okname', { labels: JSON.stringify(Object.fromEntries(Array.from({ length: 32 }, (_, i) => [`k${i}`, 'v'.repeat(255)]))) });
    expect(await sqlError(() => insertVolume('vol_bad4', 'org_sch', 'okname'))).toEqual({ code: '23505', constraint: 'volumes_org_name_live_key' });
    await insertVolume('vol_okgone', 'org_sch', 'okname', { deleted: true });
    await insertVolume('vol_okother', 'org_schx', 'okname');
    // Deleting the live one frees its name.
    await t.sql(`UPDATE volumes SET status = 'deleted', deleted_at = now() WHERE id = 'vol_good'`);
    await insertVolume('vol_okagain', 'org_sch', 'okname');
    expect(await t.sql(`SELECT id FROM volumes WHERE name = 'okname' ORDER BY id`)).toEqual([
      { id: 'vol_good' }, { id: 'vol_okagain' }, { id: 'vol_okgone' }, { id: 'vol_okother' },
    ]);
  });

  it('a quote\'s amount is exactly size × price × term, it lasts 10 minutes, and it is used once', async () => {
    const insert = (id: string, amount: string, expires = "'2026-11-23T10:10:00Z'") =>
      t.sql(
        `INSERT INTO quotes (id, org_id, region_id, type, size_gb, term_months, currency, price_usd_minor, price_idr_minor, amount, created_at, expires_at)
         VALUES ($1, 'org_sch', 'id-jkt', 'premium', 150, 12, 'USD', 2000, 320, $2, '2026-11-23T10:00:00Z', ${expires})`,
        [id, amount],
      );
    expect(await sqlError(() => insert('quo_bad', '3600001'))).toEqual({ code: '23514', constraint: 'quotes_amount_exact' });
    expect(await sqlError(() => insert('quo_bad', '3600000', "'2026-11-23T10:20:00Z'"))).toEqual({ code: '23514', constraint: 'quotes_ten_minutes' });
    await insert('quo_ok', '3600000');

    const quotes = t.app.get(QuoteRepository);
    const uow = t.app.get(UnitOfWork);
    const at = new Date('2026-11-23T10:05:00.000Z');
    expect(await uow.run(() => quotes.markUsed('quo_ok', 'vol_old1', at))).toBe(true);
    expect(await uow.run(() => quotes.markUsed('quo_ok', 'vol_old2', at))).toBe(false);
    expect(await t.sql(`SELECT used_at, volume_id FROM quotes WHERE id = 'quo_ok'`)).toEqual([{ used_at: at, volume_id: 'vol_old1' }]);
    expect((await quotes.findInOrg('org_sch', 'quo_ok'))?.usedAt).toEqual(at);
    // used_at and the volume (or, for a server quote, the server) go together; one quote per volume.
    await insert('quo_two', '3600000');
    expect(await sqlError(() => t.sql(`UPDATE quotes SET used_at = now() WHERE id = 'quo_two'`))).toEqual({ code: '23514', constraint: 'quotes_used_once' });
    expect(await sqlError(() => t.sql(`UPDATE quotes SET used_at = now(), volume_id = 'vol_old1' WHERE id = 'quo_two'`))).toEqual({
      code: '23505',
      constraint: 'quotes_volume_id_key',
    });
  });

  it('a seed file\'s volume names follow the rule and are unique in the organization (nothing written otherwise)', async () => {
    const base = organization('seedn');
    const vol = { ...base.volumes[0], server: undefined, mount_path: undefined };
    expect(
      await asyncRefusal(() => t.seed({ regions: [], organizations: [{ ...base, volumes: [{ ...vol, id: 'vol_seedn1', name: 'has space' }] }] })),
    ).toEqual({
      code: 'invalid_request',
      message: 'Seed file: organizations[0].volumes[0].name must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit',
    });
    expect(
      await asyncRefusal(() =>
        t.seed({ regions: [], organizations: [{ ...base, volumes: [{ ...vol, id: 'vol_seedn1', name: 'same' }, { ...vol, id: 'vol_seedn2', name: 'same' }] }] }),
      ),
    ).toEqual({ code: 'conflict', message: 'The organization already has a volume named same; names are unique among volumes not deleted' });
    expect(await t.sql(`SELECT id FROM organizations WHERE id = 'org_seedn'`)).toEqual([]);
  });
});
