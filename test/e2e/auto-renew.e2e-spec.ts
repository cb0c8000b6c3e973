import { AdvanceOperations } from '../../src/modules/operations/application/advance-operations.use-case';
import { AutoRenewTerms } from '../../src/modules/terms/application/auto-renew.use-case';
import { VerifyInvariants } from '../../src/modules/verification/application/verify-invariants.use-case';
import { ExpireTerms } from '../../src/modules/terms/application/expire-terms.use-case';
import { SendExpiryNotices } from '../../src/modules/terms/application/send-expiry-notices.use-case';
import { FixedClock } from '../../src/shared/kernel/clock/clock';
import { errorBody } from '../support/assertions';
import { apiToken, bearer, organization } from '../support/fixtures';
import { PAYMENT_SECRET, sessionEvent, signature } from '../support/payments';
import { IMAGES, OP_ID, SERVER_PLANS, serverRegion } from '../support/servers';
import { TestApp, startTestApp } from '../support/test-app';

const NOW = '2026-11-23T10:00:00.000Z';
const at = (iso: string, seconds: number) => new Date(new Date(iso).getTime() + seconds * 1000).toISOString();
/** AUTO_RENEW_LEAD_S and AUTO_RENEW_RETRY_S of this file. */
const LEAD = 3600;
const RETRY = 600;

/**
 * terms.md "Automatic renewal", on one app with a fixed clock (settings in seconds): auto-renew
 * set by PATCH and by a purchase; a due resource renewed once (two sweeps at once) through the
 * customer's renewal by actor system, charged once at its frozen price, never suspended; a wallet
 * that cannot pay: the attempt recorded with the 402's details and announced, retried at once when
 * the wallet is credited (not after AUTO_RENEW_RETRY_S); notices only while the last attempt failed.
 */
describe('terms: automatic renewal', () => {
  let t: TestApp;
  let advance: AdvanceOperations;
  let renew: AutoRenewTerms;
  let expire: ExpireTerms;
  const clock = new FixedClock(new Date(NOW));
  const rich = bearer(apiToken('arn', 'rw'));
  const poor = bearer(apiToken('arp', 'rw'));
  let serverId: string;
  /** The poor organization's server, bought with all its rupiah. */
  let poorId: string;

  beforeAll(async () => {
    t = await startTestApp(
      { autoRenewLeadS: LEAD, autoRenewRetryS: RETRY, expiryNoticesS: [7200], serverRetentionS: 60, volumeRetentionS: 60, webhookAllowPrivateUrls: true, paymentProviderWebhookSecret: PAYMENT_SECRET },
      clock,
    );
    const hooks = (suffix: string) => ({ name: 'hooks', scopes: ['webhooks:write', 'billing:write'], token: apiToken(suffix, 'hooks') });
    const a = organization('arn');
    const b = organization('arp', { wallet: { USD: '1.00000', IDR: '72000' } });
    await t.seed({
      server_plans: SERVER_PLANS,
      images: IMAGES,
      regions: [serverRegion('id-jkt', 256)],
      organizations: [
        { ...a, api_keys: [...a.api_keys, hooks('arn')], volumes: [
          { ...a.volumes[0], expires_at: at(NOW, 7200) },
          { ...a.volumes[0], id: 'vol_arnseed1', name: 'seeded', server: undefined, mount_path: undefined, expires_at: '2027-06-01T00:00:00.000Z', auto_renew: { enabled: true, term_months: 12 } },
        ] },
        { ...b, api_keys: [...b.api_keys, hooks('arp')], servers: [], volumes: [{ ...b.volumes[0], server: undefined, mount_path: undefined, expires_at: at(NOW, 7200) }] },
      ],
    });
    advance = t.app.get(AdvanceOperations);
    renew = t.app.get(AutoRenewTerms);
    expire = t.app.get(ExpireTerms);
    for (const suffix of ['arn', 'arp']) {
      const hook = await t.http.post('/v1/webhook-endpoints').set(bearer(apiToken(suffix, 'hooks'))).send({ url: 'http://127.0.0.1:9/hook', events: ['*'] });
      expect(hook.status).toBe(201);
    }
  });
  afterAll(async () => t?.close());

  const volume = async (id: string, key = rich) => (await t.http.get(`/v1/volumes/${id}`).set(key)).body;
  const server = async () => (await t.http.get(`/v1/servers/${serverId}`).set(rich)).body;
  const operationsOf = (column: 'volume_id' | 'vm_id', id: string, type: string) =>
    t.sql<{ id: string; status: string }>(`SELECT id, status FROM operations WHERE ${column} = $1 AND type = $2 ORDER BY created_at`, [id, type]);
  const ledgerOf = (operationId: string) => t.sql('SELECT kind, amount::text AS amount FROM wallet_ledger WHERE operation_id = $1 ORDER BY seq', [operationId]);
  const audits = (action: string, target: string) =>
    t.sql<{ actor_type: string; actor_id: string | null; data: Record<string, unknown> }>(
      'SELECT actor_type, actor_id, data FROM audit_log WHERE action = $1 AND target_id = $2 ORDER BY seq',
      [action, target],
    );
  const events = async (type: string) => (await t.sql<{ body: string }>('SELECT body FROM webhook_events WHERE type = $1 ORDER BY created_at, id', [type])).map((e) => JSON.parse(e.body));
  const off = { enabled: false, term_months: null, last_attempt: null, next_attempt_at: null };

  it('PATCH turns auto-renew on (next_attempt_at: AUTO_RENEW_LEAD_S before expires_at), audited in volume.update; bad members are 400 naming them', async () => {
    expect((await volume('vol_arndata1')).auto_renew).toEqual(off);
    const res = await t.http.patch('/v1/volumes/vol_arndata1').set(rich).send({ auto_renew: { enabled: true } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: 'vol_arndata1', expires_at: at(NOW, 7200), auto_renew: { enabled: true, term_months: null, last_attempt: null, next_attempt_at: at(NOW, 3600) } });
    expect(await audits('volume.update', 'vol_arndata1')).toEqual([
      { actor_type: 'api_key', actor_id: expect.any(String), data: { changes: { auto_renew: { old: { enabled: false, term_months: null }, new: { enabled: true, term_months: null } } } } },
    ]);
    // The same body again: nothing changes, no second audit row.
    expect((await t.http.patch('/v1/volumes/vol_arndata1').set(rich).send({ auto_renew: { enabled: true } })).status).toBe(200);
    expect(await audits('volume.update', 'vol_arndata1')).toHaveLength(1);
    expect((await t.http.patch('/v1/volumes/vol_arpdata1').set(poor).send({ auto_renew: { enabled: true, term_months: 1 } })).body.auto_renew).toEqual({
      enabled: true, term_months: 1, last_attempt: null, next_attempt_at: at(NOW, 3600),
    });

    const bad = async (body: object, field: string, message: string) => {
      const r = await t.http.patch('/v1/volumes/vol_arndata1').set(rich).send(body);
      expect(r.status).toBe(400);
      expect(r.body).toEqual(errorBody(r, 'invalid_request', message, { field }));
    };
    await bad({ auto_renew: {} }, 'auto_renew.enabled', 'auto_renew.enabled is required: true or false');
    await bad({ auto_renew: { enabled: 'yes' } }, 'auto_renew.enabled', 'auto_renew.enabled is required: true or false');
    await bad({ auto_renew: { enabled: true, term_months: 2 } }, 'auto_renew.term_months', "auto_renew.term_months must be one of 1, 3, 12, or null (the resource's own term)");
    await bad({ auto_renew: { enabled: true, every: 'day' } }, 'auto_renew.every', 'auto_renew.every is not a member of auto_renew (enabled, term_months)');
    await bad({ auto_renew: true }, 'auto_renew', 'auto_renew must be an object: {enabled, term_months?}');

    // A seeded server without a term cannot renew automatically.
    const seeded = await t.http.patch('/v1/servers/vm_arnweb1').set(rich).send({ auto_renew: { enabled: true } });
    expect(seeded.status).toBe(409);
    expect(seeded.body).toEqual(errorBody(seeded, 'invalid_state', 'Server vm_arnweb1 was not bought here (a seeded server with no term) and cannot renew automatically'));
  });

  it('a purchase takes auto_renew; the lists filter on it', async () => {
    const bad = await t.http.post('/v1/servers').set(rich).send({ name: 'app-1', region: 'id-jkt', plan: 'cx1', image: 'debian-12', term_months: 1, currency: 'USD', auto_renew: { enabled: 1 } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual({ field: 'auto_renew.enabled' });
    const res = await t.http.post('/v1/servers').set(rich).send({
      name: 'app-1', region: 'id-jkt', plan: 'cx1', image: 'debian-12', term_months: 1, currency: 'USD', auto_renew: { enabled: true, term_months: 3 },
    });
    expect(res.status).toBe(202);
    serverId = res.body.server.id;
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1 });
    expect(await server()).toMatchObject({
      status: 'running', expires_at: '2026-12-23T10:00:00.000Z',
      auto_renew: { enabled: true, term_months: 3, last_attempt: null, next_attempt_at: '2026-12-23T09:00:00.000Z' },
    });
    const on = await t.http.get('/v1/servers?auto_renew=true').set(rich);
    expect(on.body.servers.map((s: { id: string }) => s.id)).toEqual([serverId]);
    const offList = await t.http.get('/v1/servers?auto_renew=false').set(rich);
    expect(offList.body.servers.map((s: { id: string }) => s.id)).toEqual(['vm_arnweb1']);
    expect((await t.http.get('/v1/volumes?auto_renew=true').set(rich)).body.volumes.map((v: { id: string }) => v.id).sort()).toEqual(['vol_arndata1', 'vol_arnseed1']);
    expect((await t.http.get('/v1/volumes?auto_renew=false').set(rich)).body.volumes).toEqual([]);
    // The seed file's auto_renew, as a purchase's.
    expect((await volume('vol_arnseed1')).auto_renew).toEqual({ enabled: true, term_months: 12, last_attempt: null, next_attempt_at: '2027-05-31T23:00:00.000Z' });
    const cheap = await t.http.post('/v1/servers').set(poor).send({ name: 'cheap-1', region: 'id-jkt', plan: 'cx1', image: 'debian-12', term_months: 1, currency: 'IDR', auto_renew: { enabled: true } });
    expect(cheap.status).toBe(202);
    poorId = cheap.body.server.id;
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1 });
    const wrong = await t.http.get('/v1/volumes?auto_renew=yes').set(rich);
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.details).toEqual({ field: 'auto_renew' });
  });

  it('due: renewed once (two sweeps at once) by actor system at the frozen price, through the operations engine; a wallet short: the attempt fails with its details and event', async () => {
    const now = at(NOW, 3601);
    clock.set(new Date(now));
    const [x, y] = await Promise.all([renew.execute(), renew.execute()]);
    expect(x + y).toBe(2);
    expect(await renew.execute()).toBe(0);

    const [op] = await operationsOf('volume_id', 'vol_arndata1', 'volume.renew');
    expect(op).toEqual({ id: expect.stringMatching(OP_ID), status: 'pending' });
    expect((await volume('vol_arndata1')).auto_renew).toEqual({
      enabled: true, term_months: null, next_attempt_at: null,
      last_attempt: { at: now, outcome: 'accepted', operation_id: op.id, required: null, available: null, currency: null },
    });
    expect(await audits('volume.renew', 'vol_arndata1')).toEqual([
      { actor_type: 'system', actor_id: null, data: { operation_id: op.id, term_months: 1, currency: 'USD', amount: '2.00000', auto: true } },
    ]);
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1 });
    const done = (await t.http.get(`/v1/operations/${op.id}`).set(rich)).body;
    expect(done).toMatchObject({ type: 'volume.renew', status: 'succeeded', result: { volume_id: 'vol_arndata1', term_months: 1, expires_at: '2026-12-23T12:00:00.000Z' } });
    expect(await ledgerOf(op.id)).toEqual([{ kind: 'hold', amount: '200000' }, { kind: 'capture', amount: '200000' }]);
    expect(await volume('vol_arndata1')).toMatchObject({
      status: 'attached', expires_at: '2026-12-23T12:00:00.000Z', auto_renew: { enabled: true, next_attempt_at: '2026-12-23T11:00:00.000Z' },
    });

    // The poor organization's disk: no operation, no hold; the attempt with the 402's details, announced; retried after AUTO_RENEW_RETRY_S.
    expect(await t.sql('SELECT id FROM operations WHERE volume_id = $1', ['vol_arpdata1'])).toEqual([]);
    const failed = { at: now, outcome: 'insufficient_balance', operation_id: null, required: '2.00000', available: '1.00000', currency: 'USD' };
    const v = await volume('vol_arpdata1', poor);
    expect(v).toMatchObject({ status: 'available', expires_at: at(NOW, 7200), auto_renew: { enabled: true, term_months: 1, last_attempt: failed, next_attempt_at: at(now, RETRY) } });
    expect(await events('volume.auto_renew_failed')).toEqual([{ id: expect.any(String), type: 'volume.auto_renew_failed', created_at: now, data: v }]);
    expect(await t.sql('SELECT outcome, expires_at FROM auto_renew_attempts WHERE resource_id = $1', ['vol_arpdata1'])).toEqual([
      { outcome: 'insufficient_balance', expires_at: new Date(at(NOW, 7200)) },
    ]);
    expect(await audits('volume.renew', 'vol_arpdata1')).toEqual([]);

    // Notices: none for the renewed disk; the one whose attempt failed is warned, with its auto_renew.
    const notices = t.app.get(SendExpiryNotices);
    expect(await notices.execute()).toBe(1);
    expect((await events('volume.expiring')).map((e) => e.data)).toEqual([
      { id: 'vol_arpdata1', name: 'data-1', expires_at: at(NOW, 7200), days_left: 1, auto_renew: v.auto_renew },
    ]);
  });

  it('the failed attempt is retried after AUTO_RENEW_RETRY_S; a top-up then makes the next one happen at once', async () => {
    // Before AUTO_RENEW_RETRY_S nothing; at it, a second attempt, refused again and announced again.
    clock.set(new Date(at(NOW, 3601 + RETRY - 1)));
    expect(await renew.execute()).toBe(0);
    const retried = at(NOW, 3601 + RETRY);
    clock.set(new Date(retried));
    // admin.md: a suspended organization's automatic renewals pause.
    await t.sql(`UPDATE organizations SET suspended_at = now(), suspension_reason = 'review' WHERE id = 'org_arp'`);
    expect(await renew.execute()).toBe(0);
    await t.sql(`UPDATE organizations SET suspended_at = NULL, suspension_reason = NULL WHERE id = 'org_arp'`);
    expect(await renew.execute()).toBe(1);
    expect((await volume('vol_arpdata1', poor)).auto_renew).toEqual({
      enabled: true, term_months: 1, next_attempt_at: at(retried, RETRY),
      last_attempt: { at: retried, outcome: 'insufficient_balance', operation_id: null, required: '2.00000', available: '1.00000', currency: 'USD' },
    });
    expect((await events('volume.auto_renew_failed')).map((e) => e.created_at)).toEqual([at(NOW, 3601), retried]);
    expect(await t.sql('SELECT id FROM operations WHERE volume_id = $1', ['vol_arpdata1'])).toEqual([]);
    const key = bearer(apiToken('arp', 'hooks'));
    const topUp = await t.http.post('/v1/wallet/top-ups').set(key).send({ amount: '5', currency: 'USD' });
    expect(topUp.status).toBe(201);
    const id: string = topUp.body.top_up.id;
    const [{ session_id }] = await t.sql<{ session_id: string }>('SELECT session_id FROM top_ups WHERE id = $1', [id]);
    const body = sessionEvent('checkout.session.completed', { id: session_id, topUpId: id, amountTotal: 500, currency: 'usd' });
    const paid = await t.http.post('/v1/payment-events/simulated').set('Content-Type', 'application/json').set('Stripe-Signature', signature(body, Math.floor(clock.now().getTime() / 1000))).send(body);
    expect(paid.status).toBe(200);

    // A second after the top-up, well before the next retry: attempted, and accepted.
    const now = at(retried, 1);
    clock.set(new Date(now));
    expect(await renew.execute()).toBe(1);
    const [op] = await operationsOf('volume_id', 'vol_arpdata1', 'volume.renew');
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1 });
    expect(await ledgerOf(op.id)).toEqual([{ kind: 'hold', amount: '200000' }, { kind: 'capture', amount: '200000' }]);
    expect(await volume('vol_arpdata1', poor)).toMatchObject({
      status: 'available', expires_at: '2026-12-23T12:00:00.000Z',
      auto_renew: { enabled: true, term_months: 1, last_attempt: { at: now, outcome: 'accepted', operation_id: op.id }, next_attempt_at: '2026-12-23T11:00:00.000Z' },
    });
    const balance = await t.sql("SELECT available::text AS available, reserved::text AS reserved FROM wallet_balances WHERE org_id = 'org_arp' AND currency = 'USD'");
    expect(balance).toEqual([{ available: '400000', reserved: '0' }]);
    clock.set(new Date(at(NOW, 7201)));
    expect(await expire.execute()).toBe(0);
    expect(await volume('vol_arpdata1', poor)).toMatchObject({ status: 'available', suspended_at: null });
  });

  it('the server: renewed for auto_renew.term_months, never suspended; one the wallet cannot pay: no operation left, suspended at expires_at, attempts go on; PATCH turns auto-renew off', async () => {
    const due = '2026-12-23T09:00:01.000Z';
    clock.set(new Date(due));
    expect(await renew.execute()).toBe(2);
    // The poor server: its vm.renew was stored before the hold was refused; the savepoint took it back.
    expect(await operationsOf('vm_id', poorId, 'vm.renew')).toEqual([]);
    const failed = { at: due, outcome: 'insufficient_balance', operation_id: null, required: '72000', available: '0', currency: 'IDR' };
    const poorServer = (await t.http.get(`/v1/servers/${poorId}`).set(poor)).body;
    expect(poorServer).toMatchObject({ status: 'running', auto_renew: { enabled: true, term_months: null, last_attempt: failed, next_attempt_at: at(due, RETRY) } });
    expect(await events('server.auto_renew_failed')).toEqual([{ id: expect.any(String), type: 'server.auto_renew_failed', created_at: due, data: poorServer }]);

    const [op] = await operationsOf('vm_id', serverId, 'vm.renew');
    expect(await audits('server.renew', serverId)).toEqual([
      { actor_type: 'system', actor_id: null, data: { operation_id: op.id, term_months: 3, currency: 'USD', amount: '13.50000', auto: true } },
    ]);
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1 });
    expect(await ledgerOf(op.id)).toEqual([{ kind: 'hold', amount: '1350000' }, { kind: 'capture', amount: '1350000' }]);
    clock.set(new Date('2026-12-23T10:00:01.000Z'));
    // At expires_at its next attempt is due too (the retry time has passed): the suspension waits for it.
    expect(await expire.execute()).toBe(0);
    expect(await renew.execute()).toBe(1);
    expect((await t.http.get(`/v1/servers/${poorId}`).set(poor)).body.auto_renew.last_attempt).toEqual({ ...failed, at: '2026-12-23T10:00:01.000Z' });
    // Refused again: suspended.
    expect(await expire.execute()).toBe(1);
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1 });
    expect((await t.http.get(`/v1/servers/${poorId}`).set(poor)).body).toMatchObject({ status: 'suspended', suspended_at: '2026-12-23T10:00:01.000Z' });
    // Suspended, it is still attempted once the retry time has passed: refused again.
    clock.set(new Date(at('2026-12-23T10:00:01.000Z', RETRY)));
    expect(await renew.execute()).toBe(1);
    expect((await t.http.get(`/v1/servers/${poorId}`).set(poor)).body.auto_renew.last_attempt).toEqual({ ...failed, at: at('2026-12-23T10:00:01.000Z', RETRY) });
    const poorOff = await t.http.patch(`/v1/servers/${poorId}`).set(poor).send({ auto_renew: { enabled: false } });
    expect(poorOff.status).toBe(200);
    expect(poorOff.body).toMatchObject({ status: 'suspended', auto_renew: { enabled: false, next_attempt_at: null } });
    expect(await server()).toMatchObject({
      status: 'running', expires_at: '2027-03-23T10:00:00.000Z', suspended_at: null,
      auto_renew: { enabled: true, term_months: 3, last_attempt: { outcome: 'accepted', operation_id: op.id }, next_attempt_at: '2027-03-23T09:00:00.000Z' },
    });

    const res = await t.http.patch(`/v1/servers/${serverId}`).set(rich).send({ auto_renew: { enabled: false } });
    expect(res.status).toBe(200);
    expect(res.body.auto_renew).toEqual({ enabled: false, term_months: 3, last_attempt: expect.objectContaining({ outcome: 'accepted' }), next_attempt_at: null });
    expect((await audits('server.update', serverId)).map((a) => a.data)).toEqual([
      { changes: { auto_renew: { old: { enabled: true, term_months: 3 }, new: { enabled: false, term_months: 3 } } } },
    ]);
    for (const [id, key] of [['vol_arndata1', rich], ['vol_arpdata1', poor]] as const) {
      const r = await t.http.patch(`/v1/volumes/${id}`).set(key).send({ auto_renew: { enabled: false } });
      expect(r.body.auto_renew).toMatchObject({ enabled: false, last_attempt: { outcome: 'accepted' }, next_attempt_at: null });
    }
    expect((await t.http.get('/v1/volumes?auto_renew=true').set(rich)).body.volumes.map((v: { id: string }) => v.id)).toEqual(['vol_arnseed1']);
    // Months later, everything off is left alone (the disks' terms ended: the suspension sweep's business).
    clock.set(new Date('2027-03-23T09:30:00.000Z'));
    expect(await renew.execute()).toBe(0);
    // Turned on again while due: attempted at the next sweep.
    expect((await t.http.patch(`/v1/servers/${serverId}`).set(rich).send({ auto_renew: { enabled: true, term_months: null } })).body.auto_renew).toMatchObject({
      enabled: true, term_months: null, next_attempt_at: '2027-03-23T09:00:00.000Z',
    });
    expect(await renew.execute()).toBe(1);
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1 });
    expect((await server()).expires_at).toBe('2027-06-23T10:00:00.000Z');
  });

  it('cli verify: each automatic renewal accepted once per term end, a renewal of its own resource; an attempt naming another operation is named', async () => {
    const verify = t.app.get(VerifyInvariants);
    const ours = (report: { violations: { check: string; subject: string; message: string }[] }) =>
      report.violations.filter((v) => v.check === 'terms.auto_renew_once_per_term').map((v) => [v.subject, v.message]);
    expect(ours(await verify.execute())).toEqual([]);
    const [create] = await operationsOf('vm_id', serverId, 'vm.create');
    await t.sql(`INSERT INTO auto_renew_attempts (resource_id, org_id, expires_at, at, outcome, operation_id) VALUES ($1, 'org_arn', now(), now(), 'accepted', $2)`, [serverId, create.id]);
    try {
      expect(ours(await verify.execute())).toEqual([[serverId, `automatic renewal names operation ${create.id}, which is not a renewal of this resource`]]);
    } finally {
      await t.sql('DELETE FROM auto_renew_attempts WHERE operation_id = $1', [create.id]);
    }
  });
});
