import { scaled } from '../support/deadlines';
import { usingPostgres } from '../support/database';
import { apiToken, organization } from '../support/fixtures';
import { validatedFetch } from '../support/openapi-validation';
import { slowProviderWorkers } from '../support/processes';
import { IMAGES, SERVER_PLANS, serverRegion } from '../support/servers';
import { TestApp, startTestApp } from '../support/test-app';
import { expectInvariantsHold } from '../support/verify';

/**
 * A server process SIGKILLed while server images and disk snapshots are mid-step (each provider
 * call takes PROVIDER_LATENCY_MS=300), another started on the same database: every image.create
 * and snapshot.create ends, one copy at its provider each (keyed by the image's or snapshot's id),
 * each hold captured once, and `cli verify` finds every invariant holding (images.charged_once,
 * provider.images_match, snapshots.charged_once, provider.snapshots_match among them).
 * PostgreSQL only: several processes share the database.
 */
const describeOnPostgres = usingPostgres() ? describe : describe.skip;
if (!usingPostgres()) console.log('copies-processes.e2e-spec: skipped, needs DATABASE_URL (PostgreSQL)');

describeOnPostgres('server images and disk snapshots survive a SIGKILLed worker (PostgreSQL)', () => {
  let t: TestApp;
  const token = apiToken('ki', 'rw');
  const N = 8;
  const workers = slowProviderWorkers(() => t.settings.databaseUrl);

  beforeAll(async () => {
    t = await startTestApp();
    const servers = Array.from({ length: N }, (_, i) => ({
      id: `vm_kis${i + 1}`, name: `s-${i + 1}`, region: 'id-jkt', zone: 'id-jkt-a', plan: 'cx1', image: 'debian-12', term_months: 1, currency: 'USD',
      expires_at: '2030-01-31T00:00:00.000Z',
    }));
    // Detached 100 GB disks (their disks at the simulated storage provider).
    const base = organization('ki').volumes[0];
    const disks = Array.from({ length: N }, (_, i) => ({ ...base, id: `vol_kid${i + 1}`, name: `d-${i + 1}`, server: undefined, mount_path: undefined }));
    await t.seed({
      server_plans: SERVER_PLANS,
      images: IMAGES,
      regions: [serverRegion('id-jkt', 256, { snapshot_price_per_gb_month: { USD: '0.01000', IDR: '160' } })],
      organizations: [organization('ki', { servers, volumes: disks, wallet: { USD: '1000.00000' } })],
    });
  });
  afterAll(async () => {
    await workers.killAll();
    await t?.close();
  });

  it('every image and snapshot ends once: one copy at the provider each, each hold captured once, verify clean', async () => {
    const api = await workers.api();
    const post = async (path: string, name: string) => {
      const res = await validatedFetch(`${api.url}${path}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ name, term_months: 1, currency: 'USD' }),
      });
      return { status: res.status, body: (await res.json()) as { image?: { id: string }; snapshot?: { id: string }; operation: { id: string } } };
    };
    const [images, snapshots] = await Promise.all([
      Promise.all(Array.from({ length: N }, (_, i) => post(`/v1/servers/vm_kis${i + 1}/images`, `img-${i + 1}`))),
      Promise.all(Array.from({ length: N }, (_, i) => post(`/v1/volumes/vol_kid${i + 1}/snapshots`, `snap-${i + 1}`))),
    ]);
    expect([...images, ...snapshots].map((r) => r.status)).toEqual(Array(2 * N).fill(202));
    await workers.killMidStepAndFinish(t.sql, 1);

    expect(await t.sql(`SELECT type, status, count(*)::int AS n FROM operations GROUP BY type, status ORDER BY type`)).toEqual([
      { type: 'image.create', status: 'succeeded', n: N },
      { type: 'snapshot.create', status: 'succeeded', n: N },
    ]);
    expect(await t.sql(`SELECT status, disk_gb, count(*)::int AS n FROM server_images GROUP BY status, disk_gb`)).toEqual([{ status: 'available', disk_gb: 40, n: N }]);
    expect(await t.sql(`SELECT status, size_gb, count(*)::int AS n FROM snapshots GROUP BY status, size_gb`)).toEqual([{ status: 'available', size_gb: 100, n: N }]);
    // At the providers: one live copy per image, of its server, and per snapshot, of its disk.
    const imageIds = images.map((r) => r.body.image!.id).sort();
    expect((await t.sql<{ image_id: string }>(`SELECT image_id FROM provider_images WHERE deleted_at IS NULL ORDER BY image_id`)).map((r) => r.image_id)).toEqual(imageIds);
    const snapshotIds = snapshots.map((r) => r.body.snapshot!.id).sort();
    expect((await t.sql<{ snapshot_id: string }>(`SELECT snapshot_id FROM provider_snapshots WHERE deleted_at IS NULL ORDER BY snapshot_id`)).map((r) => r.snapshot_id)).toEqual(snapshotIds);
    // Money: each image (40 GB × 0.01 USD) and snapshot (100 GB × 0.01 USD) held once and captured once, nothing released.
    const ledger = await t.sql<{ kinds: string[]; amounts: string[] }>(
      `SELECT array_agg(kind ORDER BY id) AS kinds, array_agg(amount::text ORDER BY id) AS amounts
         FROM wallet_ledger WHERE org_id = 'org_ki' AND kind <> 'credit' GROUP BY operation_id ORDER BY min(amount), min(operation_id)`,
    );
    expect(ledger).toEqual([
      ...Array(N).fill({ kinds: ['hold', 'capture'], amounts: ['40000', '40000'] }),
      ...Array(N).fill({ kinds: ['hold', 'capture'], amounts: ['100000', '100000'] }),
    ]);
    expect(await t.sql(`SELECT reserved::text AS reserved FROM wallet_balances WHERE org_id = 'org_ki' AND currency = 'USD'`)).toEqual([{ reserved: '0' }]);
    expectInvariantsHold(t.settings.databaseUrl);
  }, scaled(180_000));
});
