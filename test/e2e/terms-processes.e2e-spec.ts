import { scaled } from '../support/deadlines';
import { usingPostgres } from '../support/database';
import { apiToken, bearer, organization } from '../support/fixtures';
import { ServerProcess, startServerProcess } from '../support/processes';
import { waitFor } from '../support/renewals';
import { IMAGES, SERVER_PLANS, serverRegion } from '../support/servers';
import { TestApp, startTestApp } from '../support/test-app';
import { expectInvariantsHold } from '../support/verify';
import { WebhookReceiver } from '../support/webhook-receiver';

/**
 * terms.md "Exactly once, across processes", on real server processes sharing one PostgreSQL
 * schema (their own clocks: the deadlines are set relative to now in the database, the retention
 * in seconds): 500 resources due at once, their notices, suspensions and releases each happen
 * once while one of the processes is SIGKILLed mid-sweep; customer renewals racing the
 * suspension and the release win or lose cleanly; `cli verify` holds at the end.
 * PostgreSQL only: several processes cannot share the embedded engine.
 */
const describeOnPostgres = usingPostgres() ? describe : describe.skip;
if (!usingPostgres()) {
  console.log('terms-processes.e2e-spec: skipped, needs DATABASE_URL (PostgreSQL); several processes cannot share the embedded engine');
}

/** Retention of a suspended server or volume, in seconds (the release comes this long after the suspension). */
const RETENTION_S = 4;
/** The big organization: 50 volumes attached to 10 seeded (never expiring) servers, 200 detached volumes, 250 bought servers. */
const BIG = { attached: 50, detached: 200, servers: 250 };
const BIG_TOTAL = BIG.attached + BIG.detached + BIG.servers;
/** The racing organization: detached volumes and bought servers, renewed by their customer around each deadline. */
const RACE = { volumes: 40, servers: 20 };

const FAR = '2030-01-31T00:00:00.000Z';

/** Bought servers (cx1, 4.50000 USD a month, 1-month term), inserted with their instances at the simulated provider: a fifth stopped. */
async function insertBoughtServers(t: TestApp, orgId: string, prefix: string, n: number): Promise<void> {
  await t.sql(
    `INSERT INTO servers (id, org_id, name, region_id, zone_id, status, plan_id, vcpus, memory_gb, disk_gb, image_id, ipv4, term_months,
                          billing_currency, billing_amount, price_usd_minor, price_idr_minor, expires_at)
     SELECT 'vm_' || $2 || i, $1, $2 || '-' || i, 'id-jkt', 'id-jkt-a', CASE WHEN i % 5 = 0 THEN 'stopped' ELSE 'running' END,
            'cx1', 1, 2, 40, 'debian-12', next_server_ipv4(), 1, 'USD', 450000, 450000, 72000, $4::timestamptz
       FROM generate_series(1, $3::int) AS i`,
    [orgId, prefix, n, FAR],
  );
  await t.sql(
    `INSERT INTO provider_instances (instance_id, server_id, zone_id, vcpus, memory_gb, disk_gb, image, ipv4, power)
     SELECT 'ins_' || s.id, s.id, s.zone_id, 1, 2, 40, 'debian-12', s.ipv4, s.status FROM servers s WHERE s.org_id = $1 AND s.plan_id IS NOT NULL`,
    [orgId],
  );
}

describeOnPostgres('term sweeps in several server processes (PostgreSQL)', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  const running: ServerProcess[] = [];
  const live: ServerProcess[] = [];

  const start = async () => {
    const p = await startServerProcess({
      DATABASE_URL: t.settings.databaseUrl,
      DEMO_SEED: 'false',
      WORKER_ENABLED: 'true',
      WORKER_INTERVAL_MS: '50',
      WORKER_LEASE_MS: '2000',
      TERM_SWEEP_MS: '200',
      SERVER_RETENTION_S: String(RETENTION_S),
      VOLUME_RETENTION_S: String(RETENTION_S),
      EXPIRY_NOTICES_S: '7200',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_CONCURRENCY: '16',
      DB_POOL_SIZE: '5',
    });
    running.push(p);
    live.push(p);
    return p;
  };
  const count = async (sql: string, params: unknown[] = []): Promise<number> => Number((await t.sql<{ n: string }>(sql, params))[0].n);
  const unfinished = (orgId: string) => count(`SELECT count(*) AS n FROM operations WHERE org_id = $1 AND finished_at IS NULL`, [orgId]);
  /** Per type, how many webhook events of the organization name each resource: {type: {count: resources}}. */
  const eventsPerResource = async (orgId: string, types: string[]) =>
    t.sql<{ type: string; per: number; resources: number }>(
      `SELECT type, per, count(*)::int AS resources FROM (
         SELECT type, body::jsonb -> 'data' ->> 'id' AS id, count(*)::int AS per FROM webhook_events WHERE org_id = $1 AND type = ANY($2::text[]) GROUP BY 1, 2
       ) x GROUP BY type, per ORDER BY type, per`,
      [orgId, types],
    );

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    t = await startTestApp({ webhookAllowPrivateUrls: true });
    const big = organization('tpx');
    const race = organization('tpr');
    const volume = (org: ReturnType<typeof organization>, id: string, name: string, server?: string) => ({
      ...org.volumes[0], id, name, size_gb: 10, server, mount_path: server ? `/mnt/${name}` : undefined, expires_at: FAR,
    });
    await t.seed({
      server_plans: SERVER_PLANS,
      images: IMAGES,
      regions: [serverRegion('id-jkt', 1000)],
      organizations: [
        {
          ...big,
          wallet: { USD: '0.00000' },
          api_keys: [...big.api_keys, { name: 'hooks', scopes: ['webhooks:write'], token: apiToken('tpx', 'hooks') }],
          servers: Array.from({ length: 10 }, (_, i) => ({ id: `vm_tpxhost${i + 1}`, name: `host-${i + 1}`, region: 'id-jkt', zone: 'id-jkt-a' })),
          volumes: [
            ...Array.from({ length: BIG.attached }, (_, i) => volume(big, `vol_tpxa${i + 1}`, `a${i + 1}`, `vm_tpxhost${(i % 10) + 1}`)),
            ...Array.from({ length: BIG.detached }, (_, i) => volume(big, `vol_tpxd${i + 1}`, `d${i + 1}`)),
          ],
        },
        {
          ...race,
          wallet: { USD: '10000.00000' },
          api_keys: [...race.api_keys, { name: 'hooks', scopes: ['webhooks:write'], token: apiToken('tpr', 'hooks') }],
          servers: [],
          volumes: Array.from({ length: RACE.volumes }, (_, i) => volume(race, `vol_tprv${i + 1}`, `v${i + 1}`)),
        },
      ],
    });
    await insertBoughtServers(t, 'org_tpx', 'tpxs', BIG.servers);
    await insertBoughtServers(t, 'org_tpr', 'tprs', RACE.servers);
    for (const suffix of ['tpx', 'tpr']) {
      const hook = await t.http.post('/v1/webhook-endpoints').set(bearer(apiToken(suffix, 'hooks'))).send({ url: receiver.url('/hook'), events: ['*'] });
      expect(hook.status).toBe(201);
    }
    await Promise.all([start(), start()]);
  }, scaled(120_000));
  afterAll(async () => {
    for (const p of running) await p.stop('SIGKILL');
    await t?.close();
    await receiver?.close();
  });

  it('500 resources due at once, one process SIGKILLed mid-sweep: each notice, suspension and release happens once, nothing is charged', async () => {
    // Notices first (due within the 2-hour offset), then every deadline at once.
    await t.sql(`UPDATE volumes SET expires_at = now() + interval '1 hour' WHERE org_id = 'org_tpx'`);
    await t.sql(`UPDATE servers SET expires_at = now() + interval '1 hour' WHERE org_id = 'org_tpx' AND plan_id IS NOT NULL`);
    await waitFor('500 notices', async () => (await count(`SELECT count(*) AS n FROM expiry_notices WHERE org_id = 'org_tpx'`)) === BIG_TOTAL, 20_000, 50);
    await t.sql(`UPDATE volumes SET expires_at = now() WHERE org_id = 'org_tpx'`);
    await t.sql(`UPDATE servers SET expires_at = now() WHERE org_id = 'org_tpx' AND plan_id IS NOT NULL`);

    const suspendOps = () => count(`SELECT count(*) AS n FROM operations WHERE org_id = 'org_tpx' AND type IN ('vm.suspend', 'volume.suspend')`);
    await waitFor('the sweep to have begun', async () => (await suspendOps()) > 0, 20_000, 5);
    const [victim] = live.splice(0, 1);
    expect(await victim.stop('SIGKILL')).toBeNull();
    const atKill = await suspendOps();
    // Killed while the sweep or the operations it wrote were under way.
    expect(atKill).toBeGreaterThan(0);
    await start();

    await waitFor(
      'every resource released and every operation ended',
      async () =>
        (await count(`SELECT count(*) AS n FROM volumes WHERE org_id = 'org_tpx' AND status <> 'deleted'`)) === 0 &&
        (await count(`SELECT count(*) AS n FROM servers WHERE org_id = 'org_tpx' AND plan_id IS NOT NULL AND status <> 'deleted'`)) === 0 &&
        (await unfinished('org_tpx')) === 0,
      60_000,
      200,
    ).catch(async (e: Error) => {
      // What was left, in the failure's message.
      const left = await t.sql(
        `SELECT 'volume' AS kind, status, count(*)::int AS n FROM volumes WHERE org_id = 'org_tpx' GROUP BY 2
         UNION ALL SELECT 'server', status, count(*)::int FROM servers WHERE org_id = 'org_tpx' GROUP BY 2
         UNION ALL SELECT type, status || ' ' || coalesce(error->>'code', ''), count(*)::int FROM operations WHERE org_id = 'org_tpx' GROUP BY 1, 2`,
      );
      throw new Error(`${e.message}: ${JSON.stringify(left)}\n${live.map((p) => p.output().split('\n').filter((l) => /"level":"(warn|error)"/.test(l)).slice(-5).join('\n')).join('\n')}`);
    });

    // One suspension and one release per resource, every one succeeded, by actor system.
    expect(
      await t.sql(
        `SELECT type, status, count(*)::int AS n, count(DISTINCT coalesce(volume_id, vm_id))::int AS resources FROM operations
          WHERE org_id = 'org_tpx' GROUP BY type, status ORDER BY type, status`,
      ),
    ).toEqual([
      { type: 'vm.delete', status: 'succeeded', n: BIG.servers, resources: BIG.servers },
      { type: 'vm.suspend', status: 'succeeded', n: BIG.servers, resources: BIG.servers },
      { type: 'volume.delete', status: 'succeeded', n: BIG.attached + BIG.detached, resources: BIG.attached + BIG.detached },
      { type: 'volume.suspend', status: 'succeeded', n: BIG.attached + BIG.detached, resources: BIG.attached + BIG.detached },
    ]);
    expect(
      await t.sql(`SELECT action, actor_type, count(*)::int AS n, count(DISTINCT target_id)::int AS targets FROM audit_log
          WHERE org_id = 'org_tpx' AND action IN ('server.delete', 'server.suspend', 'volume.delete', 'volume.suspend') GROUP BY 1, 2 ORDER BY 1`),
    ).toEqual([
      { action: 'server.delete', actor_type: 'system', n: BIG.servers, targets: BIG.servers },
      { action: 'server.suspend', actor_type: 'system', n: BIG.servers, targets: BIG.servers },
      { action: 'volume.delete', actor_type: 'system', n: BIG.attached + BIG.detached, targets: BIG.attached + BIG.detached },
      { action: 'volume.suspend', actor_type: 'system', n: BIG.attached + BIG.detached, targets: BIG.attached + BIG.detached },
    ]);
    // The attached volumes went through unmounting and detaching (previous_server_id kept); every resource ended released as expired.
    expect(await t.sql(`SELECT status, deleted_reason, count(*)::int AS n FROM volumes WHERE org_id = 'org_tpx' GROUP BY 1, 2`)).toEqual([
      { status: 'deleted', deleted_reason: 'expired', n: BIG.attached + BIG.detached },
    ]);
    expect(await count(`SELECT count(*) AS n FROM volumes WHERE org_id = 'org_tpx' AND previous_server_id LIKE 'vm_tpxhost%'`)).toBe(BIG.attached);
    expect(await t.sql(`SELECT status, deleted_reason, count(*)::int AS n FROM servers WHERE org_id = 'org_tpx' GROUP BY 1, 2 ORDER BY 1`)).toEqual([
      { status: 'deleted', deleted_reason: 'expired', n: BIG.servers },
      { status: 'running', deleted_reason: null, n: 10 },
    ]);
    expect(await count(`SELECT count(*) AS n FROM provider_instances WHERE server_id LIKE 'vm_tpxs%' AND deleted_at IS NULL`)).toBe(0);
    expect(await count(`SELECT count(*) AS n FROM provider_disks WHERE volume_id LIKE 'vol_tpx%' AND deleted_at IS NULL`)).toBe(0);
    // One notice recorded and sent per resource; one suspended and one deleted event per resource.
    expect(await count(`SELECT count(*) AS n FROM expiry_notices WHERE org_id = 'org_tpx'`)).toBe(BIG_TOTAL);
    const volumes = BIG.attached + BIG.detached;
    expect(await eventsPerResource('org_tpx', ['volume.expiring', 'server.expiring', 'volume.suspended', 'server.suspended', 'volume.deleted', 'server.deleted'])).toEqual([
      { type: 'server.deleted', per: 1, resources: BIG.servers },
      { type: 'server.expiring', per: 1, resources: BIG.servers },
      { type: 'server.suspended', per: 1, resources: BIG.servers },
      { type: 'volume.deleted', per: 1, resources: volumes },
      { type: 'volume.expiring', per: 1, resources: volumes },
      { type: 'volume.suspended', per: 1, resources: volumes },
    ]);
    // No charge, no refund.
    expect(await count(`SELECT count(*) AS n FROM wallet_ledger WHERE org_id = 'org_tpx'`)).toBe(0);
  }, scaled(180_000));

  /** Per resource of the racing organization: its renewals' outcome, its money, its state. */
  async function raceOutcomes() {
    return t.sql<{ id: string; status: string; deleted_reason: string | null; renewed: number; failed: number; captures: number; releases: number; suspended_after_renewal: number; expires_in_days: number }>(
      `WITH r AS (
         SELECT id, status, deleted_reason, expires_at FROM volumes WHERE org_id = 'org_tpr'
         UNION ALL SELECT id, status, deleted_reason, expires_at FROM servers WHERE org_id = 'org_tpr'
       )
       SELECT r.id, r.status, r.deleted_reason,
              (SELECT count(*)::int FROM operations o WHERE coalesce(o.volume_id, o.vm_id) = r.id AND o.type IN ('vm.renew', 'volume.renew') AND o.status = 'succeeded') AS renewed,
              (SELECT count(*)::int FROM operations o WHERE coalesce(o.volume_id, o.vm_id) = r.id AND o.type IN ('vm.renew', 'volume.renew') AND o.status = 'failed') AS failed,
              (SELECT count(*)::int FROM wallet_ledger l JOIN operations o ON o.id = l.operation_id WHERE coalesce(o.volume_id, o.vm_id) = r.id AND l.kind = 'capture') AS captures,
              (SELECT count(*)::int FROM wallet_ledger l JOIN operations o ON o.id = l.operation_id WHERE coalesce(o.volume_id, o.vm_id) = r.id AND l.kind = 'release') AS releases,
              (SELECT count(*)::int FROM operations s JOIN operations n ON coalesce(n.volume_id, n.vm_id) = r.id AND n.type IN ('vm.renew', 'volume.renew') AND n.status = 'succeeded'
                 WHERE coalesce(s.volume_id, s.vm_id) = r.id AND s.type IN ('vm.suspend', 'volume.suspend', 'vm.delete', 'volume.delete') AND s.created_at >= n.finished_at) AS suspended_after_renewal,
              floor(extract(epoch FROM (r.expires_at - now())) / 86400)::int AS expires_in_days
         FROM r ORDER BY r.id`,
    );
  }

  /** Renews `ids` through the live processes (round robin), each at its own instant (ms from now); the statuses. */
  async function renewAt(plan: { id: string; atMs: number }[]): Promise<Map<string, number>> {
    const statuses = new Map<string, number>();
    const t0 = Date.now();
    await Promise.all(
      plan.map(async ({ id, atMs }, i) => {
        await new Promise((r) => setTimeout(r, Math.max(0, atMs - (Date.now() - t0))));
        const kind = id.startsWith('vol_') ? 'volumes' : 'servers';
        const res = await fetch(`${live[i % live.length].url}/v1/${kind}/${id}/renew`, {
          method: 'POST',
          headers: { ...bearer(apiToken('tpr', 'rw')), 'Content-Type': 'application/json' },
          body: JSON.stringify({ term_months: 1 }),
        });
        statuses.set(id, res.status);
      }),
    );
    return statuses;
  }

  const settle = () => waitFor('the racing organization\'s operations to end', async () => (await unfinished('org_tpr')) === 0, 60_000, 100);

  it('renewals racing the suspension: each renewal accepted is charged once and the resource is never suspended after it; one refused leaves no charge', async () => {
    const ids = [
      ...Array.from({ length: RACE.volumes }, (_, i) => `vol_tprv${i + 1}`),
      ...Array.from({ length: RACE.servers }, (_, i) => `vm_tprs${i + 1}`),
    ];
    const deadlineMs = 1500;
    await t.sql(`UPDATE volumes SET expires_at = now() + make_interval(secs => $1::float / 1000) WHERE org_id = 'org_tpr'`, [deadlineMs]);
    await t.sql(`UPDATE servers SET expires_at = now() + make_interval(secs => $1::float / 1000) WHERE org_id = 'org_tpr'`, [deadlineMs]);
    // Spread over the second around the deadline, volumes and servers interleaved.
    const statuses = await renewAt(ids.map((id, i) => ({ id, atMs: deadlineMs - 500 + ((i * 7) % ids.length) * (1000 / ids.length) })));
    await settle();

    const outcomes = await raceOutcomes();
    expect(outcomes).toHaveLength(ids.length);
    for (const o of outcomes) {
      const status = statuses.get(o.id);
      // A clean answer: accepted, or refused because the suspension got the row first (its operation in the way).
      expect([o.id, [202, 409].includes(status!)]).toEqual([o.id, true]);
      if (status === 202) {
        // Renewed (before the suspension, or resumed after it): charged once, live, a month ahead, never suspended after.
        expect(o).toMatchObject({ renewed: 1, failed: 0, captures: 1, releases: 0, suspended_after_renewal: 0 });
        expect([o.id, ['available', 'running', 'stopped'].includes(o.status), o.expires_in_days >= 27]).toEqual([o.id, true, true]);
      } else {
        expect(o).toMatchObject({ status: 'suspended', renewed: 0, failed: 0, captures: 0, releases: 0 });
      }
    }
    const [wallet] = await t.sql(`SELECT reserved::text AS reserved FROM wallet_balances WHERE org_id = 'org_tpr' AND currency = 'USD'`);
    expect(wallet).toEqual({ reserved: '0' });
  }, scaled(120_000));

  it('renewals racing the release: a suspended resource is renewed (charged once, live) or released (deleted, expired, not charged), never both', async () => {
    const suspended = await t.sql<{ id: string; until_release_ms: number }>(
      `SELECT id, (extract(epoch FROM (release_at - now())) * 1000)::int AS until_release_ms FROM volumes WHERE org_id = 'org_tpr' AND status = 'suspended'
       UNION ALL SELECT id, (extract(epoch FROM (release_at - now())) * 1000)::int FROM servers WHERE org_id = 'org_tpr' AND status = 'suspended' ORDER BY 1`,
    );
    const renewedBefore = new Set((await raceOutcomes()).filter((o) => o.renewed > 0).map((o) => o.id));
    // Each suspended one renewed somewhere in the second around its release_at.
    const statuses = await renewAt(suspended.map((s, i) => ({ id: s.id, atMs: s.until_release_ms - 500 + ((i * 7) % suspended.length) * (1000 / Math.max(1, suspended.length)) })));
    await settle();
    // Those whose renewal lost are released at the next sweeps: wait for them too.
    await waitFor(
      'every racer settled (renewed or released)',
      async () => (await count(`SELECT count(*) AS n FROM (SELECT status FROM volumes WHERE org_id = 'org_tpr' UNION ALL SELECT status FROM servers WHERE org_id = 'org_tpr') x WHERE status IN ('suspended', 'deleting')`)) === 0 && (await unfinished('org_tpr')) === 0,
      30_000,
      100,
    );

    const outcomes = new Map((await raceOutcomes()).map((o) => [o.id, o]));
    for (const s of suspended) {
      const o = outcomes.get(s.id)!;
      const status = statuses.get(s.id);
      // A deleted server answers 404 (it is gone), a deleting or busy resource 409.
      expect([s.id, [202, 404, 409].includes(status!)]).toEqual([s.id, true]);
      if (status === 202) {
        expect(o).toMatchObject({ renewed: 1, failed: 0, captures: 1, releases: 0, suspended_after_renewal: 0, deleted_reason: null });
        expect([s.id, ['available', 'running', 'stopped'].includes(o.status)]).toEqual([s.id, true]);
      } else {
        expect(o).toMatchObject({ status: 'deleted', deleted_reason: 'expired', renewed: 0, captures: 0, releases: 0 });
      }
    }
    // Whatever won before is untouched: still live, charged once.
    for (const id of renewedBefore) expect(outcomes.get(id)).toMatchObject({ renewed: 1, captures: 1, deleted_reason: null });
    // Never charged and released.
    expect([...outcomes.values()].filter((o) => o.status === 'deleted' && o.captures > 0)).toEqual([]);
    const [sums] = await t.sql(
      `SELECT (SELECT available::text FROM wallet_balances WHERE org_id = 'org_tpr' AND currency = 'USD') AS available,
              (1000000000 - coalesce(sum(amount) FILTER (WHERE kind = 'capture'), 0))::text AS expected
         FROM wallet_ledger WHERE org_id = 'org_tpr'`,
    );
    expect(sums.available).toBe(sums.expected);
  }, scaled(120_000));

  it('at the end, `verify` finds every invariant holding (the terms checks among them)', async () => {
    await waitFor('every webhook delivery to end', async () => (await count(`SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'pending'`)) === 0, 60_000, 200);
    expectInvariantsHold(t.settings.databaseUrl);
  }, scaled(120_000));
});
