import { scaled } from '../support/deadlines';
import { EventOutbox } from '../../src/modules/webhooks/application/event-outbox.port';
import { UnitOfWork } from '../../src/shared/database/unit-of-work';
import { usingPostgres } from '../support/database';
import { apiToken, bearer, organization, region } from '../support/fixtures';
import { ServerProcess, startServerProcess } from '../support/processes';
import { waitFor } from '../support/renewals';
import { TestApp, startTestApp } from '../support/test-app';
import { WebhookReceiver } from '../support/webhook-receiver';

/**
 * A server process SIGKILLed while it delivers: 500 deliveries due, the process killed after
 * the receiver got some of them; a new process ends every delivery (each event received with a
 * 2xx at least once), none lost. PostgreSQL only: several processes share the database.
 */
const describeOnPostgres = usingPostgres() ? describe : describe.skip;
if (!usingPostgres()) console.log('webhooks-processes.e2e-spec: skipped, needs DATABASE_URL (PostgreSQL)');

describeOnPostgres('webhook deliveries survive a SIGKILLed server (PostgreSQL)', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  const running: ServerProcess[] = [];
  const N = 500;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    receiver.on('/slow', () => ({ status: 200, delayMs: 30 }));
    t = await startTestApp({ webhookAllowPrivateUrls: true });
    const org = organization('wpk');
    await t.seed({ regions: [region()], organizations: [{ ...org, api_keys: [{ name: 'hooks', scopes: ['webhooks:write'], token: apiToken('wpk', 'hooks') }] }] });
  }, scaled(60_000));
  afterAll(async () => {
    for (const p of running) await p.stop('SIGKILL');
    await t?.close();
    await receiver?.close();
  });

  const start = async () => {
    const p = await startServerProcess({
      DATABASE_URL: t.settings.databaseUrl, DEMO_SEED: 'false', WORKER_ENABLED: 'true', WORKER_INTERVAL_MS: '50', WORKER_LEASE_MS: '1500',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_CONCURRENCY: '16', WEBHOOK_RETRY_SCHEDULE_S: '0,1,1,1,1,1,1,1', DB_POOL_SIZE: '5',
    });
    running.push(p);
    return p;
  };

  it('ends every one of 500 due deliveries after a SIGKILL and a restart', async () => {
    const created = await t.http.post('/v1/webhook-endpoints').set(bearer(apiToken('wpk', 'hooks'))).send({ url: receiver.url('/slow'), events: ['volume.deleted'] });
    expect(created.status).toBe(201);
    const endpointId = created.body.webhook_endpoint.id;
    await t.app.get(UnitOfWork).run(() =>
      t.app.get(EventOutbox).recordMany(Array.from({ length: N }, (_, i) => ({ orgId: 'org_wpk', type: 'volume.deleted' as const, createdAt: new Date(), data: { id: `vol_${i}` } }))),
    );
    const events = (await t.sql<{ id: string }>('SELECT id FROM webhook_events WHERE org_id = $1', ['org_wpk'])).map((r) => r.id);
    expect(events).toHaveLength(N);
    expect(await t.sql("SELECT status, count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1 GROUP BY status", [endpointId])).toEqual([{ status: 'pending', n: N }]);

    const first = await start();
    await waitFor('the first process to deliver some', async () => receiver.at('/slow').length >= 60, 30_000);
    expect(await first.stop('SIGKILL')).toBeNull();
    const before = new Set(receiver.at('/slow').map((r) => r.headers['webhook-id']));
    expect(before.size).toBeLessThan(N);

    await start();
    await waitFor('every delivery to end', async () => (await t.sql<{ n: number }>("SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'pending'"))[0].n === 0, 60_000, 200);
    expect(await t.sql("SELECT status, count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1 GROUP BY status", [endpointId])).toEqual([{ status: 'succeeded', n: N }]);
    const received = new Set(receiver.at('/slow').map((r) => r.headers['webhook-id']));
    expect([...received].sort()).toEqual([...events].sort());
  }, scaled(120_000));
});
