import { Webhook } from 'standardwebhooks';
import { AdvanceOperations } from '../../src/modules/operations/application/advance-operations.use-case';
import { DeliverWebhooks } from '../../src/modules/webhooks/application/deliver-webhooks.use-case';
import { EventOutbox } from '../../src/modules/webhooks/application/event-outbox.port';
import { PurgeWebhookHistoryJob } from '../../src/modules/webhooks/interface/jobs/purge-webhook-history.job';
import { UnitOfWork } from '../../src/shared/database/unit-of-work';
import { FixedClock } from '../../src/shared/kernel/clock/clock';
import { apiToken, bearer, orgWithDetachedVolumes, region } from '../support/fixtures';
import { TestApp, startTestApp } from '../support/test-app';
import { WebhookReceiver } from '../support/webhook-receiver';

const WE_ID = /^we_[A-Za-z0-9]{24}$/;
const EVT_ID = /^evt_[A-Za-z0-9]{24}$/;

/**
 * Event webhooks end to end (funding.md "Event webhooks"), on either engine, with a receiver on
 * 127.0.0.1 (WEBHOOK_ALLOW_PRIVATE_URLS), a fixed clock moved instead of sleeping, the retry
 * schedule 0, 2, 2, 2 s and a 300 ms timeout; the worker and the deliveries are run by the test.
 */
describe('event webhooks', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  // Near the real time: standardwebhooks refuses a webhook-timestamp more than 5 minutes away.
  const clock = new FixedClock(new Date(Math.floor(Date.now() / 1000) * 1000));
  const admin = bearer(apiToken('whk', 'hooks'));
  const rw = bearer(apiToken('whk', 'rw'));
  let renewals = 0;

  const deliver = () => t.app.get(DeliverWebhooks).runUntilIdle();
  const createEndpoint = async (path: string, events: unknown = ['operation.succeeded', 'operation.failed'], description?: string) => {
    const res = await t.http.post('/v1/webhook-endpoints').set(admin).send({ url: receiver.url(path), events, ...(description === undefined ? {} : { description }) });
    expect(res.status).toBe(201);
    return res.body as { webhook_endpoint: { id: string }; secret: string };
  };
  /** Renews the next volume, runs the worker: the ended operation as GET returns it. */
  const renewAndRun = async () => {
    const res = await t.http.post(`/v1/volumes/vol_whkv${++renewals}/renew`).set(rw).send({ term_months: 1 });
    expect(res.status).toBe(202);
    clock.advance(1000);
    await t.app.get(AdvanceOperations).runUntilIdle();
    const op = await t.http.get(`/v1/operations/${res.body.operation.id}`).set(rw);
    expect(op.body.status).toBe('succeeded');
    return op;
  };
  const deliveries = async (endpointId: string) => (await t.http.get(`/v1/webhook-endpoints/${endpointId}/deliveries`).set(admin)).body.deliveries;
  const cleanUp = async (id: string) => expect((await t.http.delete(`/v1/webhook-endpoints/${id}`).set(admin)).status).toBe(204);

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    t = await startTestApp({ webhookAllowPrivateUrls: true, webhookRetryScheduleS: [0, 2, 2, 2], webhookTimeoutMs: 300, webhookDisableAfterS: 3600 }, clock);
    const org = orgWithDetachedVolumes('whk', 20);
    await t.seed({
      regions: [region()],
      organizations: [
        { ...org, api_keys: [...org.api_keys, { name: 'hooks', scopes: ['webhooks:write'], token: apiToken('whk', 'hooks') }] },
        orgWithDetachedVolumes('whx', 1),
      ],
    });
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  describe('/v1/webhook-endpoints', () => {
    it('creates an endpoint: 201 with the secret once, stored sealed, audited; GET and list never show the secret', async () => {
      const res = await t.http.post('/v1/webhook-endpoints').set(admin).send({ url: receiver.url('/crud'), events: ['volume.deleted', 'operation.failed', 'volume.deleted'] });
      expect(res.status).toBe(201);
      const endpoint = {
        id: expect.stringMatching(WE_ID), url: receiver.url('/crud'), events: ['volume.deleted', 'operation.failed'], description: null, status: 'enabled',
        disabled_reason: null, failing_since: null, secret_rotation_ends_at: null, created_at: clock.now().toISOString(), updated_at: clock.now().toISOString(),
      };
      expect(res.body).toEqual({ webhook_endpoint: endpoint, secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{32}$/) });
      const { id } = res.body.webhook_endpoint;
      const [row] = await t.sql<{ secret_sealed: string }>('SELECT secret_sealed FROM webhook_endpoints WHERE id = $1', [id]);
      expect(row.secret_sealed).toMatch(/^sealed:v1:/);
      expect(row.secret_sealed).not.toContain(res.body.secret.slice(6));
      expect(await t.sql('SELECT actor_type, action, target_type, data FROM audit_log WHERE target_id = $1', [id])).toEqual([
        { actor_type: 'api_key', action: 'webhook_endpoint.create', target_type: 'webhook_endpoint', data: { url: receiver.url('/crud'), events: ['volume.deleted', 'operation.failed'], description: null } },
      ]);
      expect(JSON.stringify(await t.sql('SELECT * FROM audit_log WHERE target_id = $1', [id]))).not.toContain(res.body.secret);
      const got = await t.http.get(`/v1/webhook-endpoints/${id}`).set(admin);
      expect(got.status).toBe(200);
      expect(got.body).toEqual(endpoint);
      const list = await t.http.get('/v1/webhook-endpoints').set(admin);
      expect(list.status).toBe(200);
      expect(list.body).toEqual({ webhook_endpoints: [endpoint], next_cursor: null });
      await cleanUp(id);
    });

    it('replays a keyed create with the same secret, stored sealed in the idempotency store, and creates one endpoint', async () => {
      const body = { url: receiver.url('/idem'), events: ['*'], description: 'pipeline' };
      const first = await t.http.post('/v1/webhook-endpoints').set(admin).set('Idempotency-Key', 'whk-create-1').send(body);
      const again = await t.http.post('/v1/webhook-endpoints').set(admin).set('Idempotency-Key', 'whk-create-1').send(body);
      expect(first.status).toBe(201);
      expect(again.status).toBe(201);
      expect(again.text).toBe(first.text);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(await t.sql("SELECT count(*)::int AS n FROM webhook_endpoints WHERE url = $1", [body.url])).toEqual([{ n: 1 }]);
      const stored = await t.sql<{ status_code: number; response_body: string }>("SELECT status_code, response_body FROM idempotency_records WHERE org_id = 'org_whk'");
      expect(stored).toEqual([{ status_code: 201, response_body: expect.stringMatching(/^sealed:v1:/) }]);
      expect(stored[0].response_body).not.toContain(first.body.secret.slice(6));
      await cleanUp(first.body.webhook_endpoint.id);
    });

    it('refuses bad input naming the field, other scopes, and a 17th endpoint', async () => {
      const bad = async (body: object, field: string) => {
        const res = await t.http.post('/v1/webhook-endpoints').set(admin).send(body);
        expect(res.status).toBe(400);
        expect(res.body.error).toMatchObject({ code: 'invalid_request', details: { field } });
      };
      await bad({ events: ['*'] }, 'url');
      await bad({ url: receiver.url('/x'), events: [] }, 'events');
      await bad({ url: receiver.url('/x'), events: ['ping'] }, 'events');
      await bad({ url: receiver.url('/x'), events: ['*', 'volume.deleted'] }, 'events');
      await bad({ url: receiver.url('/x'), events: 'volume.deleted' }, 'events');
      await bad({ url: receiver.url('/x'), events: ['*'], description: '' }, 'description');
      await bad({ url: receiver.url('/x'), events: ['*'], description: 'd'.repeat(257) }, 'description');
      const forbidden = await t.http.get('/v1/webhook-endpoints').set(rw);
      expect(forbidden.status).toBe(403);
      expect(forbidden.body.error.message).toBe('The API key lacks the scope webhooks:write');
      const ids: string[] = [];
      for (let i = 0; i < 16; i++) ids.push((await createEndpoint(`/q${i}`, ['*'])).webhook_endpoint.id);
      const over = await t.http.post('/v1/webhook-endpoints').set(admin).send({ url: receiver.url('/q17'), events: ['*'] });
      expect(over.status).toBe(409);
      expect(over.body.error).toMatchObject({ code: 'quota_exceeded', details: { limit: 16 } });
      expect(await t.sql("SELECT count(*)::int AS n FROM webhook_endpoints WHERE org_id = 'org_whk'")).toEqual([{ n: 16 }]);
      for (const id of ids) await cleanUp(id);
    });

    it('PATCHes the members given (the same values write nothing), disables and enables; DELETE then 404', async () => {
      const { webhook_endpoint: created } = await createEndpoint('/patch', ['operation.succeeded']);
      clock.advance(1000);
      const same = await t.http.patch(`/v1/webhook-endpoints/${created.id}`).set(admin).send({ events: ['operation.succeeded'] });
      expect(same.status).toBe(200);
      expect(same.body.updated_at).toBe(same.body.created_at);
      const changed = await t.http.patch(`/v1/webhook-endpoints/${created.id}`).set(admin).send({ events: ['*'], description: 'all', disabled: true });
      expect(changed.status).toBe(200);
      expect(changed.body).toMatchObject({ events: ['*'], description: 'all', status: 'disabled', disabled_reason: 'manual', updated_at: clock.now().toISOString() });
      const enabled = await t.http.patch(`/v1/webhook-endpoints/${created.id}`).set(admin).send({ disabled: false });
      expect(enabled.body).toMatchObject({ status: 'enabled', disabled_reason: null, failing_since: null });
      expect(await t.sql("SELECT data FROM audit_log WHERE target_id = $1 AND action = 'webhook_endpoint.update' ORDER BY created_at, id", [created.id])).toEqual([
        { data: { old: { events: ['operation.succeeded'], description: null, disabled: false }, new: { events: ['*'], description: 'all', disabled: true } } },
        { data: { old: { disabled: true }, new: { disabled: false } } },
      ]);
      const badUrl = await t.http.patch(`/v1/webhook-endpoints/${created.id}`).set(admin).send({ url: 'ftp://example.com/' });
      expect(badUrl.status).toBe(400);
      expect(badUrl.body.error.details).toEqual({ field: 'url' });
      await cleanUp(created.id);
      expect((await t.http.delete(`/v1/webhook-endpoints/${created.id}`).set(admin)).status).toBe(404);
      expect((await t.http.get(`/v1/webhook-endpoints/${created.id}`).set(admin)).status).toBe(404);
    });
  });

  describe('deliveries', () => {
    it("sends an operation's end signed, verifiable with standardwebhooks, its data the operation's GET", async () => {
      const { webhook_endpoint: endpoint, secret } = await createEndpoint('/ok');
      const op = await renewAndRun();
      expect(await deliver()).toBe(1);
      const [got] = receiver.at('/ok');
      expect(got.headers).toMatchObject({ 'content-type': 'application/json', 'user-agent': 'CloudDiskService-Webhooks/1', 'webhook-timestamp': String(Math.floor(clock.now().getTime() / 1000)) });
      const event = new Webhook(secret).verify(got.body, got.headers as Record<string, string>) as { id: string };
      expect(event).toEqual({ id: expect.stringMatching(EVT_ID), type: 'operation.succeeded', created_at: op.body.finished_at, data: op.body });
      expect(got.body).toBe(JSON.stringify(event));
      // Byte for byte the GET, the stored result's members in the order the database returns them.
      expect(got.body).toContain(`"data":${op.text}}`);
      expect(got.headers['webhook-id']).toBe(event.id);
      expect(got.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
      expect(await deliveries(endpoint.id)).toEqual([
        {
          id: expect.stringMatching(/^dlv_/), endpoint_id: endpoint.id, event_id: event.id, event_type: 'operation.succeeded', status: 'succeeded', attempts: 1,
          created_at: clock.now().toISOString(), last_attempt_at: clock.now().toISOString(), last_response_status: 200, last_error: null, next_attempt_at: null, redelivery_of: null,
        },
      ]);
      await cleanUp(endpoint.id);
    });

    it('retries a 500 with the same webhook-id, then succeeds; failing_since set, then cleared', async () => {
      receiver.on('/flaky', (n) => (n === 0 ? { status: 500 } : { status: 200 }));
      const { webhook_endpoint: endpoint } = await createEndpoint('/flaky');
      await renewAndRun();
      await deliver();
      const [first] = await deliveries(endpoint.id);
      expect(first).toMatchObject({ status: 'pending', attempts: 1, last_response_status: 500, last_error: 'http_status' });
      const due = Date.parse(first.next_attempt_at) - clock.now().getTime();
      expect(due).toBeGreaterThanOrEqual(1800);
      expect(due).toBeLessThanOrEqual(2200);
      expect((await t.http.get(`/v1/webhook-endpoints/${endpoint.id}`).set(admin)).body.failing_since).toBe(clock.now().toISOString());
      expect(await deliver()).toBe(0); // not due yet
      clock.advance(2500);
      expect(await deliver()).toBe(1);
      const calls = receiver.at('/flaky');
      expect(calls).toHaveLength(2);
      expect(calls[1].headers['webhook-id']).toBe(calls[0].headers['webhook-id']);
      expect(calls[1].body).toBe(calls[0].body);
      expect((await deliveries(endpoint.id))[0]).toMatchObject({ status: 'succeeded', attempts: 2, last_response_status: 200, last_error: null, next_attempt_at: null });
      expect((await t.http.get(`/v1/webhook-endpoints/${endpoint.id}`).set(admin)).body.failing_since).toBeNull();
      await cleanUp(endpoint.id);
    });

    it('disables the endpoint on a 410 (gone), fails its pending deliveries, audited as the system', async () => {
      receiver.on('/gone', () => ({ status: 410 }));
      const { webhook_endpoint: endpoint } = await createEndpoint('/gone');
      await renewAndRun();
      await renewAndRun();
      await deliver();
      expect(receiver.at('/gone').length).toBeGreaterThanOrEqual(1);
      const got = (await t.http.get(`/v1/webhook-endpoints/${endpoint.id}`).set(admin)).body;
      expect(got).toMatchObject({ status: 'disabled', disabled_reason: 'gone' });
      const all = await deliveries(endpoint.id);
      expect(all.every((d: { status: string }) => d.status === 'failed')).toBe(true);
      // The first 410 recorded fails the other delivery too (endpoint_disabled), even when its own attempt was in flight.
      const outcomes = all.map((d: { last_error: string; last_response_status: number | null }) => `${d.last_error}:${d.last_response_status}`).sort();
      expect(outcomes).toHaveLength(2);
      expect(outcomes).toContain('http_status:410');
      expect(['endpoint_disabled:null', 'endpoint_disabled:410', 'http_status:410']).toContain(outcomes.find((o: string) => o !== 'http_status:410') ?? 'http_status:410');
      expect(await t.sql("SELECT actor_type, data FROM audit_log WHERE target_id = $1 AND action = 'webhook_endpoint.disable'", [endpoint.id])).toEqual([{ actor_type: 'system', data: { reason: 'gone' } }]);
      const test = await t.http.post(`/v1/webhook-endpoints/${endpoint.id}/test`).set(admin);
      expect(test.status).toBe(409);
      expect(test.body.error.code).toBe('invalid_state');
      await cleanUp(endpoint.id);
    });

    it('times out a hanging receiver and retries it', async () => {
      receiver.on('/hang', (n) => (n === 0 ? 'hang' : { status: 204 }));
      const { webhook_endpoint: endpoint } = await createEndpoint('/hang');
      await renewAndRun();
      await deliver();
      expect((await deliveries(endpoint.id))[0]).toMatchObject({ status: 'pending', attempts: 1, last_response_status: null, last_error: 'timeout' });
      clock.advance(2500);
      await deliver();
      expect(receiver.at('/hang')).toHaveLength(2);
      expect((await deliveries(endpoint.id))[0]).toMatchObject({ status: 'succeeded', attempts: 2, last_response_status: 204 });
      await cleanUp(endpoint.id);
    });

    it('ends a delivery failed after the last attempt of the schedule', async () => {
      receiver.on('/down', () => ({ status: 503 }));
      const { webhook_endpoint: endpoint } = await createEndpoint('/down');
      await renewAndRun();
      for (let i = 0; i < 4; i++) {
        await deliver();
        clock.advance(2500);
      }
      expect(receiver.at('/down')).toHaveLength(4);
      expect((await deliveries(endpoint.id))[0]).toMatchObject({ status: 'failed', attempts: 4, last_response_status: 503, last_error: 'http_status', next_attempt_at: null });
      await cleanUp(endpoint.id);
    });

    it('signs with both secrets during a rotation, the new one first; rotating again is 409', async () => {
      const { webhook_endpoint: endpoint, secret: oldSecret } = await createEndpoint('/rotate');
      const rotated = await t.http.post(`/v1/webhook-endpoints/${endpoint.id}/rotate-secret`).set(admin);
      expect(rotated.status).toBe(200);
      const newSecret = rotated.body.secret;
      expect(newSecret).not.toBe(oldSecret);
      expect(rotated.body.webhook_endpoint.secret_rotation_ends_at).toBe(new Date(clock.now().getTime() + 86_400_000).toISOString());
      const again = await t.http.post(`/v1/webhook-endpoints/${endpoint.id}/rotate-secret`).set(admin);
      expect(again.status).toBe(409);
      expect(again.body.error.code).toBe('invalid_state');
      const ping = await t.http.post(`/v1/webhook-endpoints/${endpoint.id}/test`).set(admin);
      expect(ping.status).toBe(202);
      expect(ping.body.delivery).toMatchObject({ endpoint_id: endpoint.id, event_type: 'ping', status: 'pending', attempts: 0 });
      await deliver();
      const [got] = receiver.at('/rotate');
      const signatures = String(got.headers['webhook-signature']).split(' ');
      expect(signatures).toHaveLength(2);
      const headers = got.headers as Record<string, string>;
      expect(new Webhook(newSecret).verify(got.body, { ...headers, 'webhook-signature': signatures[0] })).toMatchObject({ type: 'ping', data: { endpoint_id: endpoint.id } });
      expect(new Webhook(oldSecret).verify(got.body, { ...headers, 'webhook-signature': signatures[1] })).toMatchObject({ type: 'ping' });
      expect(await t.sql("SELECT count(*)::int AS n FROM audit_log WHERE target_id = $1 AND action = 'webhook_endpoint.rotate_secret'", [endpoint.id])).toEqual([{ n: 1 }]);
      // After the overlap only the new secret signs.
      clock.advance(86_400_000 + 1000);
      await t.http.post(`/v1/webhook-endpoints/${endpoint.id}/test`).set(admin);
      await deliver();
      clock.set(new Date(Math.floor(Date.now() / 1000) * 1000));
      expect(String(receiver.at('/rotate')[1].headers['webhook-signature']).split(' ')).toHaveLength(1);
      await cleanUp(endpoint.id);
    });

    it('redelivers the same webhook-id and body; refused while the original is pending', async () => {
      const { webhook_endpoint: endpoint } = await createEndpoint('/again');
      await renewAndRun();
      const [pending] = await deliveries(endpoint.id);
      const early = await t.http.post(`/v1/webhook-endpoints/${endpoint.id}/deliveries/${pending.id}/redeliver`).set(admin);
      expect(early.status).toBe(409);
      await deliver();
      const res = await t.http.post(`/v1/webhook-endpoints/${endpoint.id}/deliveries/${pending.id}/redeliver`).set(admin);
      expect(res.status).toBe(202);
      expect(res.body.delivery).toMatchObject({ event_id: pending.event_id, event_type: 'operation.succeeded', status: 'pending', attempts: 0, redelivery_of: pending.id });
      await deliver();
      const [a, b] = receiver.at('/again');
      expect(b.headers['webhook-id']).toBe(a.headers['webhook-id']);
      expect(b.body).toBe(a.body);
      const missing = await t.http.post(`/v1/webhook-endpoints/${endpoint.id}/deliveries/dlv_nope/redeliver`).set(admin);
      expect(missing.status).toBe(404);
      const filtered = await t.http.get(`/v1/webhook-endpoints/${endpoint.id}/deliveries?status=succeeded&event_type=operation.succeeded&limit=1`).set(admin);
      expect(filtered.status).toBe(200);
      expect(filtered.body.deliveries).toHaveLength(1);
      expect(filtered.body.next_cursor).toEqual(expect.any(String));
      const badFilter = await t.http.get(`/v1/webhook-endpoints/${endpoint.id}/deliveries?status=done`).set(admin);
      expect(badFilter.status).toBe(400);
      expect(badFilter.body.error.details).toEqual({ field: 'status' });
      await cleanUp(endpoint.id);
    });

    it('writes nothing for a rolled-back change, and nothing when no endpoint subscribes', async () => {
      const { webhook_endpoint: endpoint } = await createEndpoint('/rollback', ['*']);
      const before = await t.sql<{ n: number }>('SELECT count(*)::int AS n FROM webhook_events');
      await expect(
        t.app.get(UnitOfWork).run(async () => {
          await t.app.get(EventOutbox).record({ orgId: 'org_whk', type: 'volume.deleted', createdAt: clock.now(), data: { id: 'vol_x' } });
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      await t.app.get(EventOutbox).record({ orgId: 'org_whx', type: 'volume.deleted', createdAt: clock.now(), data: { id: 'vol_y' } });
      expect(await t.sql('SELECT count(*)::int AS n FROM webhook_events')).toEqual(before);
      expect(await deliver()).toBe(0);
      expect(receiver.at('/rollback')).toHaveLength(0);
      await cleanUp(endpoint.id);
    });

    it('sends volume.deleted with the Volume as its GET returns it', async () => {
      const { webhook_endpoint: endpoint, secret } = await createEndpoint('/deleted', ['volume.deleted']);
      const del = await t.http.delete('/v1/volumes/vol_whkv20').set(rw);
      expect(del.status).toBe(202);
      clock.advance(1000);
      await t.app.get(AdvanceOperations).runUntilIdle();
      await deliver();
      const volume = await t.http.get('/v1/volumes/vol_whkv20').set(rw);
      expect(volume.body.status).toBe('deleted');
      const [got] = receiver.at('/deleted');
      expect(new Webhook(secret).verify(got.body, got.headers as Record<string, string>)).toEqual({ id: expect.stringMatching(EVT_ID), type: 'volume.deleted', created_at: volume.body.deleted_at, data: volume.body });
      await cleanUp(endpoint.id);
    });

    it('keeps at most 4 deliveries of one endpoint in flight, whatever the free slots', async () => {
      const { webhook_endpoint: a } = await createEndpoint('/limit-a');
      const { webhook_endpoint: b } = await createEndpoint('/limit-b');
      for (let i = 0; i < 6; i++) await renewAndRun();
      const worker = t.app.get(DeliverWebhooks);
      const perEndpoint = (claimed: { endpointId: string }[]) => claimed.reduce<Record<string, number>>((n, d) => ({ ...n, [d.endpointId]: (n[d.endpointId] ?? 0) + 1 }), {});
      // 6 due for each endpoint and 16 free slots: 4 of each, the oldest first.
      const first = await worker.claim(16);
      expect(perEndpoint(first)).toEqual({ [a.id]: 4, [b.id]: 4 });
      // Both at 4 under their leases: nothing more, though 4 more are due.
      expect(await worker.claim(16)).toEqual([]);
      // 4 of a answered: a has room for its last 2, b still none.
      await Promise.all(first.filter((d) => d.endpointId === a.id).map((d) => worker.attempt(d)));
      const second = await worker.claim(16);
      expect(perEndpoint(second)).toEqual({ [a.id]: 2 });
      await Promise.all([...first.filter((d) => d.endpointId === b.id), ...second].map((d) => worker.attempt(d)));
      const third = await worker.claim(16);
      expect(perEndpoint(third)).toEqual({ [b.id]: 2 });
      await Promise.all(third.map((d) => worker.attempt(d)));
      expect(await worker.claim(16)).toEqual([]);
      expect(receiver.at('/limit-a')).toHaveLength(6);
      expect(receiver.at('/limit-b')).toHaveLength(6);
      expect(new Set([...receiver.at('/limit-a'), ...receiver.at('/limit-b')].map((r) => r.headers['webhook-id'])).size).toBe(6);
      for (const endpoint of [a, b]) {
        expect((await deliveries(endpoint.id)).map((d: { status: string; attempts: number }) => [d.status, d.attempts])).toEqual(Array(6).fill(['succeeded', 1]));
        await cleanUp(endpoint.id);
      }
    });
  });

  it('purges ended deliveries and their events after 30 days, never a pending one', async () => {
    const { webhook_endpoint: endpoint } = await createEndpoint('/old', ['*']);
    const old = new Date(clock.now().getTime() - 31 * 86_400_000);
    await t.sql(`INSERT INTO webhook_events (id, org_id, type, created_at, body) VALUES ('evt_whkold1', 'org_whk', 'ping', $1, '{}'), ('evt_whkold2', 'org_whk', 'ping', $1, '{}')`, [old]);
    await t.sql(
      `INSERT INTO webhook_deliveries (id, endpoint_id, event_id, event_type, status, attempts, created_at, next_attempt_at)
       VALUES ('dlv_whkold1', $1, 'evt_whkold1', 'ping', 'succeeded', 1, $2, NULL), ('dlv_whkold2', $1, 'evt_whkold2', 'ping', 'pending', 1, $2, $3)`,
      [endpoint.id, old, new Date(clock.now().getTime() + 3_600_000)],
    );
    await t.app.get(PurgeWebhookHistoryJob).tick();
    expect(await t.sql("SELECT id FROM webhook_deliveries WHERE id LIKE 'dlv_whkold%'")).toEqual([{ id: 'dlv_whkold2' }]);
    expect(await t.sql("SELECT id FROM webhook_events WHERE id LIKE 'evt_whkold%'")).toEqual([{ id: 'evt_whkold2' }]);
    await cleanUp(endpoint.id);
  });

  it('reports deliveries by outcome and the outbox lag in the metrics', async () => {
    const { Metrics } = await import('../../src/shared/observability/metrics');
    const metrics = await t.app.get(Metrics).registry.metrics();
    expect(metrics).toMatch(/cds_webhook_delivery_attempts_total\{outcome="success"\} \d+/);
    expect(metrics).toMatch(/cds_webhook_delivery_attempts_total\{outcome="timeout"\} 1/);
    expect(metrics).toMatch(/cds_webhook_deliveries_ended_total\{status="succeeded"\} \d+/);
    expect(metrics).toMatch(/cds_webhook_deliveries_pending \d+/);
    expect(metrics).toMatch(/cds_webhook_outbox_lag_seconds 0/);
  });
});
