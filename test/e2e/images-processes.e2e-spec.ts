import { usingPostgres } from '../support/database';
import { apiToken, organization } from '../support/fixtures';
import { validatedFetch } from '../support/openapi-validation';
import { slowProviderWorkers } from '../support/processes';
import { IMAGES, SERVER_PLANS, serverRegion } from '../support/servers';
import { TestApp, startTestApp } from '../support/test-app';
import { expectInvariantsHold } from '../support/verify';

/**
 * A server process SIGKILLed while server images are mid-step (each compute provider call takes
 * PROVIDER_LATENCY_MS=300), another started on the same database: every image.create ends, one
 * copy at the provider each (keyed by image id), each hold captured once, and `cli verify` finds
 * every invariant holding (images.charged_once, provider.images_match among them).
 * PostgreSQL only: several processes share the database.
 */
const describeOnPostgres = usingPostgres() ? describe : describe.skip;
if (!usingPostgres()) console.log('images-processes.e2e-spec: skipped, needs DATABASE_URL (PostgreSQL)');

describeOnPostgres('server images survive a SIGKILLed worker (PostgreSQL)', () => {
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
    await t.seed({
      server_plans: SERVER_PLANS,
      images: IMAGES,
      regions: [serverRegion('id-jkt', 256, { snapshot_price_per_gb_month: { USD: '0.01000', IDR: '160' } })],
      organizations: [organization('ki', { servers, volumes: [], wallet: { USD: '1000.00000' } })],
    });
  });
  afterAll(async () => {
    await workers.killAll();
    await t?.close();
  });

  it('every image ends once: one copy at the provider each, each hold captured once, verify clean', async () => {
    const a = await workers.start();
    const accepted = await Promise.all(
      Array.from({ length: N }, async (_, i) => {
        const res = await validatedFetch(`${a.url}/v1/servers/vm_kis${i + 1}/images`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ name: `img-${i + 1}`, term_months: 1, currency: 'USD' }),
        });
        return { status: res.status, body: (await res.json()) as { image: { id: string }; operation: { id: string } } };
      }),
    );
    expect(accepted.map((r) => r.status)).toEqual(Array(N).fill(202));
    await workers.killMidStepAndFinish(t.sql, a, 1);

    expect(await t.sql(`SELECT type, status, count(*)::int AS n FROM operations GROUP BY type, status`)).toEqual([{ type: 'image.create', status: 'succeeded', n: N }]);
    expect(await t.sql(`SELECT status, disk_gb, count(*)::int AS n FROM server_images GROUP BY status, disk_gb`)).toEqual([{ status: 'available', disk_gb: 40, n: N }]);
    // At the provider: one live copy per image, of its server.
    const ids = accepted.map((r) => r.body.image.id).sort();
    expect((await t.sql<{ image_id: string }>(`SELECT image_id FROM provider_images WHERE deleted_at IS NULL ORDER BY image_id`)).map((r) => r.image_id)).toEqual(ids);
    // Money: each image held once and captured once (40 GB × 0.01 USD), nothing released.
    const ledger = await t.sql<{ kinds: string[]; amounts: string[] }>(
      `SELECT array_agg(kind ORDER BY id) AS kinds, array_agg(amount::text ORDER BY id) AS amounts
         FROM wallet_ledger WHERE org_id = 'org_ki' AND kind <> 'credit' GROUP BY operation_id`,
    );
    expect(ledger).toEqual(Array(N).fill({ kinds: ['hold', 'capture'], amounts: ['40000', '40000'] }));
    expect(await t.sql(`SELECT reserved::text AS reserved FROM wallet_balances WHERE org_id = 'org_ki' AND currency = 'USD'`)).toEqual([{ reserved: '0' }]);
    expectInvariantsHold(t.settings.databaseUrl);
  }, 180_000);
});
