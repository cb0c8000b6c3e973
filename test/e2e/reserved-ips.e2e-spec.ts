import { AdvanceOperations } from '../../src/modules/operations/application/advance-operations.use-case';
import { ReservedIpTerms } from '../../src/modules/reserved-ips/application/reserved-ip-terms.use-case';
import { ReconcileReservedIps } from '../../src/modules/reserved-ips/application/reconcile-reserved-ips.use-case';
import { VerifyInvariants } from '../../src/modules/verification/application/verify-invariants.use-case';
import { FixedClock } from '../../src/shared/kernel/clock/clock';
import { errorBody } from '../support/assertions';
import { apiToken, bearer, organization } from '../support/fixtures';
import { IMAGES, SERVER_PLANS, serverRegion } from '../support/servers';
import { TestApp, startTestApp } from '../support/test-app';

const NOW = '2026-11-23T10:00:00.000Z';
const at = (iso: string, seconds: number) => new Date(new Date(iso).getTime() + seconds * 1000).toISOString();
const OP_ID = /^op_[A-Za-z0-9]{24}$/;
const RIP_ID = /^rip_[A-Za-z0-9]{24}$/;
const PRICE = { USD: '1.00000', IDR: '16000' };

/**
 * Reserved IPv4 addresses on one app with a fixed clock moved past the deadlines (retention and
 * cooldown in seconds): reserved from a region's pool for a term (hold at acceptance, capture at
 * success, exact amounts), assigned to a server and kept when the server is deleted, assigned to
 * another, unassigned, renewed, released back to the pool (handed out again after the cooldown),
 * refused with their envelopes, suspended and released at the end of their term, the provider's
 * assignment the same as the database's (the reconciliation sweep repairs a difference), checked
 * by cli verify.
 */
describe('reserved IPs', () => {
  let t: TestApp;
  let advance: AdvanceOperations;
  const clock = new FixedClock(new Date(NOW));
  const rw = bearer(apiToken('rip', 'rw'));
  const other = bearer(apiToken('riq', 'rw'));
  const poor = bearer(apiToken('rir', 'rw'));
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    t = await startTestApp({ volumeRetentionS: 120, ipCooldownS: 300, webhookAllowPrivateUrls: true }, clock);
    const base = organization('rip');
    await t.seed({
      server_plans: SERVER_PLANS,
      images: IMAGES,
      regions: [
        serverRegion('id-jkt', 256, { reserved_ipv4_price_per_month: PRICE, reserved_ipv4_pool: ['198.51.100.0/30'] }),
        serverRegion('sg-sin', 256, { name: 'Singapore', reserved_ipv4_price_per_month: PRICE, reserved_ipv4_pool: ['198.51.100.8/32'] }),
        serverRegion('au-syd', 256, { name: 'Sydney' }),
      ],
      organizations: [
        { ...base, servers: [], volumes: [], api_keys: [...base.api_keys, { name: 'hooks', scopes: ['webhooks:write'], token: apiToken('rip', 'hooks') }] },
        organization('riq', { servers: [], volumes: [] }),
        organization('rir', { servers: [], volumes: [], wallet: { USD: '0.50000', IDR: '0' } }),
      ],
    });
    advance = t.app.get(AdvanceOperations);
    const hook = await t.http.post('/v1/webhook-endpoints').set(bearer(apiToken('rip', 'hooks'))).send({ url: 'http://127.0.0.1:9/hook', events: ['reserved_ip.released'] });
    expect(hook.status).toBe(201);
    for (const [name, region] of [['a', 'id-jkt'], ['b', 'id-jkt'], ['c', 'id-jkt'], ['sin', 'sg-sin']]) {
      const res = await t.http.post('/v1/servers').set(rw).send({ name, region, plan: 'cx1', image: 'debian-12', term_months: 1, currency: 'USD' });
      expect(res.status).toBe(202);
      ids[name] = res.body.server.id;
    }
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 4, failed: 0 });
  });
  afterAll(async () => t?.close());

  const get = (id: string, auth = rw) => t.http.get(`/v1/reserved-ips/${id}`).set(auth);
  const reserve = (body: object, auth = rw) => t.http.post('/v1/reserved-ips').set(auth).send({ region: 'id-jkt', term_months: 1, currency: 'USD', ...body });
  const assign = (id: string, serverId: string) => t.http.post(`/v1/reserved-ips/${id}/assign`).set(rw).send({ server_id: serverId });
  const unassign = (id: string) => t.http.post(`/v1/reserved-ips/${id}/unassign`).set(rw).send();
  const balance = async (orgId: string, currency = 'USD') =>
    (await t.sql<{ available: string; reserved: string }>(`SELECT available::text AS available, reserved::text AS reserved FROM wallet_balances WHERE org_id = $1 AND currency = $2`, [orgId, currency]))[0];
  const ledger = (operationId: string) => t.sql(`SELECT kind, currency, amount::text AS amount FROM wallet_ledger WHERE operation_id = $1 ORDER BY seq`, [operationId]);
  const routed = async (id: string) => (await t.sql<{ server_id: string | null }>(`SELECT server_id FROM provider_addresses WHERE address_id = $1`, [id]))[0]?.server_id;
  const serverIp = async (serverId: string) => (await t.http.get(`/v1/servers/${serverId}`).set(rw)).body.reserved_ip;
  const verify = async () => (await t.app.get(VerifyInvariants).execute()).violations.filter((v) => v.check !== 'webhooks.deliveries_on_schedule');

  let first: string;
  let firstIp: string;
  let firstExpires: string;

  it('reserves an address of the region: 202 {reserved_ip, operation}, the hold of price × term, captured once when allocated', async () => {
    const before = await balance('org_rip');
    const res = await reserve({ labels: { role: 'ingress' } });
    expect(res.status).toBe(202);
    first = res.body.reserved_ip.id;
    firstIp = res.body.reserved_ip.ip;
    const opId: string = res.body.operation.id;
    expect(first).toMatch(RIP_ID);
    expect(opId).toMatch(OP_ID);
    expect(firstIp).toBe('198.51.100.0');
    expect(res.headers.location).toBe(`/v1/operations/${opId}`);
    expect(res.body).toEqual({
      reserved_ip: {
        id: first, ip: '198.51.100.0', region: 'id-jkt', server_id: null, status: 'allocating', term_months: 1,
        billing: { currency: 'USD', amount: '1.00000' }, price_per_month: PRICE, expires_at: '2026-12-23T10:00:00.000Z',
        auto_renew: { enabled: false, term_months: null }, labels: { role: 'ingress' }, created_at: NOW,
        suspended_at: null, release_at: null, released_at: null, released_reason: null,
      },
      operation: {
        id: opId, type: 'ip.reserve', status: 'pending', vm_id: null, reserved_ip_id: first,
        steps: [{ name: 'payment_reserved', status: 'succeeded' }, { name: 'allocating', status: 'pending' }],
        result: null, error: null, created_at: NOW, finished_at: null,
      },
    });
    const held = (BigInt(before.available) - 100000n).toString();
    expect(await balance('org_rip')).toEqual({ available: held, reserved: '100000' });

    clock.set(new Date(at(NOW, 5)));
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1, failed: 0 });
    firstExpires = '2026-12-23T10:00:05.000Z';
    const done = await t.http.get(`/v1/operations/${opId}`).set(rw);
    expect(done.body).toMatchObject({
      status: 'succeeded',
      steps: [{ name: 'payment_reserved', status: 'succeeded' }, { name: 'allocating', status: 'succeeded' }],
      result: { reserved_ip_id: first, ip: firstIp, server_id: null, expires_at: firstExpires, charged: { currency: 'USD', amount: '1.00000' } },
    });
    expect((await get(first)).body).toEqual({ ...res.body.reserved_ip, status: 'available', expires_at: firstExpires });
    expect(await balance('org_rip')).toEqual({ available: held, reserved: '0' });
    expect(await ledger(opId)).toEqual([
      { kind: 'hold', currency: 'USD', amount: '100000' },
      { kind: 'capture', currency: 'USD', amount: '100000' },
    ]);
    expect(await t.sql(`SELECT actor_type, target_type, data FROM audit_log WHERE action = 'reserved_ip.reserve' AND target_id = $1`, [first])).toEqual([
      {
        actor_type: 'api_key', target_type: 'reserved_ip',
        data: { operation_id: opId, ip: firstIp, region: 'id-jkt', server_id: null, term_months: 1, currency: 'USD', amount: '1.00000' },
      },
    ]);
  });

  it('assigns it to a server: ip.assign routes it there at the provider; the server shows reserved_ip beside its ipv4', async () => {
    const res = await assign(first, ids.a);
    expect(res.status).toBe(202);
    expect(res.body.reserved_ip).toMatchObject({ id: first, status: 'available', server_id: null });
    expect(res.body.operation).toMatchObject({ type: 'ip.assign', vm_id: ids.a, reserved_ip_id: first, steps: [{ name: 'assigning', status: 'pending' }] });
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1, failed: 0 });
    expect((await t.http.get(`/v1/operations/${res.body.operation.id}`).set(rw)).body.result).toEqual({ reserved_ip_id: first, ip: firstIp, server_id: ids.a, assigned: true });
    expect((await get(first)).body).toMatchObject({ status: 'assigned', server_id: ids.a });
    const server = (await t.http.get(`/v1/servers/${ids.a}`).set(rw)).body;
    expect(server.reserved_ip).toEqual({ id: first, ip: firstIp });
    expect(server.ipv4).toMatch(/^100\.64\./);
    expect(await routed(first)).toBe(ids.a);
    // The server's firewall judges packets to the reserved address as to its own: no rule, no packet in.
    const verdict = await t.http.get(`/v1/servers/${ids.a}/firewall?direction=in&protocol=tcp&address=192.0.2.1&port=22`).set(rw);
    expect(verdict.status).toBe(200);
    expect(verdict.body.verdict).toEqual({ allowed: false, rule_id: null });
    expect(await verify()).toEqual([]);
  });

  it('its server deleted, the address is kept (available), routed to nothing, and assigned to another server', async () => {
    const del = await t.http.delete(`/v1/servers/${ids.a}`).set(rw);
    expect(del.status).toBe(202);
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1, failed: 0 });
    expect((await t.http.get(`/v1/servers/${ids.a}`).set(rw)).body).toMatchObject({ status: 'deleted', reserved_ip: null });
    expect((await get(first)).body).toMatchObject({ status: 'available', server_id: null, ip: firstIp });
    expect(await routed(first)).toBeNull();
    expect(await verify()).toEqual([]);

    const res = await assign(first, ids.b);
    expect(res.status).toBe(202);
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1, failed: 0 });
    expect((await get(first)).body).toMatchObject({ status: 'assigned', server_id: ids.b, ip: firstIp });
    expect(await serverIp(ids.b)).toEqual({ id: first, ip: firstIp });
    expect(await routed(first)).toBe(ids.b);
    // The unassignment the server's deletion made is audited, by the service (actor system), naming the deletion.
    expect(await t.sql(`SELECT action, actor_type FROM audit_log WHERE target_id = $1 ORDER BY seq`, [first])).toEqual([
      { action: 'reserved_ip.reserve', actor_type: 'api_key' },
      { action: 'reserved_ip.assign', actor_type: 'api_key' },
      { action: 'reserved_ip.unassign', actor_type: 'system' },
      { action: 'reserved_ip.assign', actor_type: 'api_key' },
    ]);
    expect(
      await t.sql(`SELECT org_id, actor_id, target_type, ip_address, request_id, data FROM audit_log WHERE target_id = $1 AND action = 'reserved_ip.unassign'`, [first]),
    ).toEqual([
      {
        org_id: 'org_rip', actor_id: null, target_type: 'reserved_ip', ip_address: null, request_id: null,
        data: { operation_id: del.body.operation.id, ip: firstIp, server_id: ids.a, reason: 'server_deleted' },
      },
    ]);
  });

  it('reserves with server_id: steps payment_reserved, allocating, assigning; assigned when it succeeds', async () => {
    const res = await reserve({ server_id: ids.c, term_months: 3, currency: 'IDR' });
    expect(res.status).toBe(202);
    ids.second = res.body.reserved_ip.id;
    expect(res.body.reserved_ip).toMatchObject({ ip: '198.51.100.1', status: 'allocating', server_id: null, billing: { currency: 'IDR', amount: '48000' } });
    expect(res.body.operation).toMatchObject({
      type: 'ip.reserve', vm_id: ids.c,
      steps: [{ name: 'payment_reserved', status: 'succeeded' }, { name: 'allocating', status: 'pending' }, { name: 'assigning', status: 'pending' }],
    });
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1, failed: 0 });
    expect((await get(ids.second)).body).toMatchObject({ status: 'assigned', server_id: ids.c, expires_at: '2027-02-23T10:00:05.000Z' });
    expect(await ledger(res.body.operation.id)).toEqual([
      { kind: 'hold', currency: 'IDR', amount: '48000' },
      { kind: 'capture', currency: 'IDR', amount: '48000' },
    ]);
    expect(await routed(ids.second)).toBe(ids.c);
  });

  it('refuses with an envelope and writes nothing', async () => {
    const before = await t.sql(`SELECT count(*)::int AS n FROM reserved_ips`);
    const cases: [object, number, string, string, object][] = [
      [{ region: undefined }, 400, 'invalid_request', 'region is required', { field: 'region' }],
      [{ term_months: 2 }, 400, 'invalid_request', 'term_months must be 1, 3 or 12', { field: 'term_months' }],
      [{ currency: 'EUR' }, 400, 'invalid_request', 'currency must be USD or IDR', { field: 'currency' }],
      [{ region: 'xx-nowhere' }, 400, 'invalid_request', 'region must be a region of GET /v1/regions (xx-nowhere is not)', { field: 'region' }],
      [{ region: 'au-syd' }, 400, 'invalid_request', 'Region au-syd sells no reserved addresses', { field: 'region' }],
      [{ server_id: ids.sin }, 400, 'invalid_request', `server_id must be a server in region id-jkt (server ${ids.sin} is in sg-sin)`, { field: 'server_id' }],
      [{ server_id: 'vm_nothere' }, 404, 'not_found', 'Server vm_nothere not found', {}],
      [{ server_id: ids.a }, 404, 'not_found', `Server ${ids.a} not found`, {}],
      [{ server_id: ids.b }, 409, 'conflict', `Server ${ids.b} has a reserved address already (${first}); unassign it first`, { existing_id: first }],
      [{ labels: { 'Bad Key': 'x' } }, 400, 'invalid_request', 'labels: key "Bad Key" must be 1 to 63 of a-z, 0-9, ".", "_", "/", "-"', { field: 'labels.Bad Key' }],
    ];
    for (const [body, status, code, message, details] of cases) {
      const res = await reserve(body);
      expect({ body, status: res.status, payload: res.body }).toEqual({ body, status, payload: errorBody(res, code, message, details) });
    }
    const unknown = await reserve({ colour: 'red' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ code: 'invalid_request', details: { field: 'colour' } });
    // 402: the wallet cannot pay; nothing is left (the address back in the pool).
    const broke = await reserve({}, poor);
    expect(broke.status).toBe(402);
    expect(broke.body).toEqual(errorBody(broke, 'insufficient_balance', expect.any(String), { required: '1.00000', available: '0.50000', currency: 'USD' }));
    expect(await t.sql(`SELECT count(*)::int AS n FROM reserved_ips`)).toEqual(before);
    expect(await t.sql(`SELECT count(*)::int AS n FROM reserved_ip_pool WHERE reserved_ip_id IS NOT NULL`)).toEqual([{ n: 2 }]);

    // Actions on the address.
    const notMine = await get(first, other);
    expect(notMine.status).toBe(404);
    expect(notMine.body).toEqual(errorBody(notMine, 'not_found', `Reserved IP ${first} not found`));
    const same = await assign(first, ids.b);
    expect(same.status).toBe(409);
    expect(same.body).toEqual(errorBody(same, 'invalid_state', `Reserved IP ${first} is assigned to server ${ids.b} already`));
    const taken = await assign(first, ids.c);
    expect(taken.status).toBe(409);
    expect(taken.body).toEqual(errorBody(taken, 'conflict', `Server ${ids.c} has a reserved address already (${ids.second}); unassign it first`, { existing_id: ids.second }));
    const elsewhere = await assign(first, ids.sin);
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body).toEqual(errorBody(elsewhere, 'invalid_request', `server_id must be a server in region id-jkt (server ${ids.sin} is in sg-sin)`, { field: 'server_id' }));
    const noServer = await t.http.post(`/v1/reserved-ips/${first}/assign`).set(rw).send({});
    expect(noServer.status).toBe(400);
    expect(noServer.body).toEqual(errorBody(noServer, 'invalid_request', 'server_id is required', { field: 'server_id' }));
    const badRenew = await t.http.post(`/v1/reserved-ips/${first}/renew`).set(rw).send({ term_months: 5 });
    expect(badRenew.status).toBe(400);
    expect(badRenew.body).toEqual(errorBody(badRenew, 'invalid_request', 'term_months must be 1, 3 or 12', { field: 'term_months' }));
    const badFilter = await t.http.get('/v1/reserved-ips?status=lost').set(rw);
    expect(badFilter.status).toBe(400);
    expect(badFilter.body.error).toMatchObject({ code: 'invalid_request', details: { field: 'status' } });
    // Busy: an unfinished operation on it.
    const moving = await unassign(ids.second);
    expect(moving.status).toBe(202);
    const busy = await unassign(ids.second);
    expect(busy.status).toBe(409);
    expect(busy.body).toEqual(errorBody(busy, 'invalid_state', `Reserved IP ${ids.second} has an unfinished operation ${moving.body.operation.id}; wait for it to end`, { operation_id: moving.body.operation.id }));
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1, failed: 0 });
    expect((await get(ids.second)).body).toMatchObject({ status: 'available', server_id: null });
    expect(await serverIp(ids.c)).toBeNull();
    expect(await routed(ids.second)).toBeNull();
    const notAssigned = await unassign(ids.second);
    expect(notAssigned.status).toBe(409);
    expect(notAssigned.body).toEqual(errorBody(notAssigned, 'invalid_state', `Reserved IP ${ids.second} is not assigned to a server`));
  });

  it('409 out_of_stock when the pool has no free address: nothing is written; a released address comes back after IP_COOLDOWN_S', async () => {
    const sin = await reserve({ region: 'sg-sin' });
    expect(sin.status).toBe(202);
    expect(sin.body.reserved_ip.ip).toBe('198.51.100.8');
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1 });
    const before = await balance('org_rip');
    const full = await reserve({ region: 'sg-sin' });
    expect(full.status).toBe(409);
    expect(full.body).toEqual(errorBody(full, 'out_of_stock', 'Region sg-sin has no free address to reserve now; retry later or choose another region'));
    expect(await balance('org_rip')).toEqual(before);

    const rel = await t.http.delete(`/v1/reserved-ips/${sin.body.reserved_ip.id}`).set(rw);
    expect(rel.status).toBe(202);
    expect(rel.body.operation).toMatchObject({ type: 'ip.release', vm_id: null, steps: [{ name: 'releasing', status: 'pending' }] });
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1 });
    const released = (await get(sin.body.reserved_ip.id)).body;
    expect(released).toMatchObject({ status: 'released', released_reason: 'customer', released_at: at(NOW, 5), server_id: null });
    const again = await t.http.delete(`/v1/reserved-ips/${sin.body.reserved_ip.id}`).set(rw);
    expect(again.status).toBe(409);
    expect(again.body).toEqual(errorBody(again, 'invalid_state', `Reserved IP ${sin.body.reserved_ip.id} is released`));
    // Cooling down: not handed out yet.
    clock.set(new Date(at(NOW, 5 + 299)));
    const cooling = await reserve({ region: 'sg-sin' });
    expect(cooling.status).toBe(409);
    expect(cooling.body.error.code).toBe('out_of_stock');
    clock.set(new Date(at(NOW, 5 + 300)));
    const back = await reserve({ region: 'sg-sin' });
    expect(back.status).toBe(202);
    expect(back.body.reserved_ip.ip).toBe('198.51.100.8');
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1 });
    // The released one is listed with status=released only.
    const live = await t.http.get('/v1/reserved-ips?region=sg-sin').set(rw);
    expect(live.body).toEqual({ reserved_ips: [(await get(back.body.reserved_ip.id)).body], next_cursor: null });
    const gone = await t.http.get('/v1/reserved-ips?status=released').set(rw);
    expect(gone.body).toEqual({ reserved_ips: [(await get(sin.body.reserved_ip.id)).body], next_cursor: null });
    const events = await t.sql<{ body: string }>(`SELECT body FROM webhook_events WHERE type = 'reserved_ip.released'`);
    expect(events.map((e) => JSON.parse(e.body).data)).toEqual([released]);
  });

  it('lists with label and status filters and pages; PATCH changes labels and auto_renew (audited); renews at the frozen price', async () => {
    const patch = await t.http.patch(`/v1/reserved-ips/${first}`).set(rw).send({ labels: { role: 'edge' }, auto_renew: { enabled: true } });
    expect(patch.status).toBe(200);
    expect(patch.body).toEqual({ ...(await get(first)).body, labels: { role: 'edge' }, auto_renew: { enabled: true, term_months: null } });
    expect(await t.sql(`SELECT data FROM audit_log WHERE action = 'reserved_ip.update' AND target_id = $1`, [first])).toEqual([
      { data: { changes: { labels: { old: { role: 'ingress' }, new: { role: 'edge' } }, auto_renew: { old: { enabled: false, term_months: null }, new: { enabled: true, term_months: null } } } } },
    ]);
    const byLabel = await t.http.get('/v1/reserved-ips?label=role=edge').set(rw);
    expect(byLabel.body).toEqual({ reserved_ips: [(await get(first)).body], next_cursor: null });
    const assigned = await t.http.get('/v1/reserved-ips?status=assigned').set(rw);
    expect(assigned.body.reserved_ips.map((r: { id: string }) => r.id)).toEqual([first]);
    const page1 = await t.http.get('/v1/reserved-ips?limit=2').set(rw);
    expect(page1.body.reserved_ips).toHaveLength(2);
    const page2 = await t.http.get(`/v1/reserved-ips?limit=2&cursor=${page1.body.next_cursor}`).set(rw);
    expect(page2.body).toEqual({ reserved_ips: [expect.objectContaining({ id: first })], next_cursor: null });
    expect((await t.http.get('/v1/reserved-ips').set(other)).body).toEqual({ reserved_ips: [], next_cursor: null });

    const renew = await t.http.post(`/v1/reserved-ips/${ids.second}/renew`).set(rw).send({ term_months: 1 });
    expect(renew.status).toBe(202);
    expect(renew.body.operation).toMatchObject({ type: 'ip.renew', steps: [{ name: 'renewing', status: 'running' }] });
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1 });
    // Its billing currency (IDR) by default: 16000 × 1; expires_at + 1 month.
    expect((await get(ids.second)).body).toMatchObject({ term_months: 1, billing: { currency: 'IDR', amount: '16000' }, expires_at: '2027-03-23T10:00:05.000Z' });
    expect(await ledger(renew.body.operation.id)).toEqual([
      { kind: 'hold', currency: 'IDR', amount: '16000' },
      { kind: 'capture', currency: 'IDR', amount: '16000' },
    ]);
  });

  it('the reconciliation sweep repairs an assignment the provider and the database disagree on (the provider wins, audited)', async () => {
    // The provider routes the second address to server c (an answer lost): recorded as assigned.
    await t.sql(`UPDATE provider_addresses SET server_id = $2 WHERE address_id = $1`, [ids.second, ids.c]);
    expect(await verify()).toEqual([
      { check: 'reserved_ips.assignments_match', subject: ids.second, message: `assigned to nothing here, routed to server ${ids.c} at the compute provider`, details: { org_id: 'org_rip' } },
    ]);
    expect(await t.app.get(ReconcileReservedIps).execute()).toBe(1);
    expect((await get(ids.second)).body).toMatchObject({ status: 'assigned', server_id: ids.c });
    expect(await t.sql(`SELECT actor_type, data FROM audit_log WHERE action = 'reserved_ip.reconcile' AND target_id = $1`, [ids.second])).toEqual([
      { actor_type: 'system', data: { ip: '198.51.100.1', server_id: { old: null, new: ids.c }, reason: `routed to server ${ids.c} at the compute provider` } },
    ]);
    expect(await verify()).toEqual([]);
    expect(await t.app.get(ReconcileReservedIps).execute()).toBe(0);
  });

  it('cli verify names an address the term sweep left past its deadline (expires_at assigned or available, release_at suspended); clean otherwise', async () => {
    const deadlines = async () => (await verify()).filter((v) => v.check === 'terms.deadlines_met');
    expect(await deadlines()).toEqual([]);
    const [sin] = await t.sql<{ id: string; expires_at: Date }>(`SELECT id, expires_at FROM reserved_ips WHERE region_id = 'sg-sin' AND status = 'available'`);
    const [{ expires_at: secondExpires }] = await t.sql<{ expires_at: Date }>(`SELECT expires_at FROM reserved_ips WHERE id = $1`, [ids.second]);
    // TERM_SWEEP_MS (5 s by default) + 60 s of grace.
    const grace = 65;
    await t.sql(`UPDATE reserved_ips SET expires_at = '2026-01-01T00:00:00Z' WHERE id = $1`, [ids.second]);
    await t.sql(`UPDATE reserved_ips SET status = 'suspended', suspended_at = '2026-01-01T00:00:00Z', release_at = '2026-01-02T00:00:00Z' WHERE id = $1`, [sin.id]);
    try {
      const found = await deadlines();
      expect([...found].sort((x, y) => (x.subject < y.subject ? -1 : 1))).toEqual(
        [
          {
            check: 'terms.deadlines_met', subject: ids.second, message: `assigned past its expires_at (2026-01-01T00:00:00.000Z) by more than ${grace} s`,
            details: { org_id: 'org_rip', status: 'assigned', expires_at: '2026-01-01T00:00:00.000Z' },
          },
          {
            check: 'terms.deadlines_met', subject: sin.id, message: `suspended past its release_at (2026-01-02T00:00:00.000Z) by more than ${grace} s`,
            details: { org_id: 'org_rip', status: 'suspended', release_at: '2026-01-02T00:00:00.000Z' },
          },
        ].sort((x, y) => (x.subject < y.subject ? -1 : 1)),
      );
      // An address with an operation in flight is the operation's to settle: not named.
      await t.sql(`UPDATE reserved_ips SET operation_id = 'op_inflight' WHERE id = $1`, [sin.id]);
      expect((await deadlines()).map((v) => v.subject)).toEqual([ids.second]);
    } finally {
      await t.sql(`UPDATE reserved_ips SET expires_at = $2 WHERE id = $1`, [ids.second, secondExpires]);
      await t.sql(`UPDATE reserved_ips SET status = 'available', suspended_at = NULL, release_at = NULL, operation_id = NULL WHERE id = $1`, [sin.id]);
    }
    expect(await verify()).toEqual([]);
  });

  it('at the end of its term an assigned address is unassigned and suspended (ip.unassign by system), refuses assignment, then is released (expired)', async () => {
    const terms = t.app.get(ReservedIpTerms);
    // The first one renews itself (auto_renew on): 1.00000 USD charged by system.
    await t.http.patch(`/v1/reserved-ips/${first}`).set(rw).send({ auto_renew: { enabled: false } });
    clock.set(new Date(firstExpires));
    expect(await terms.execute()).toBe(1);
    const [suspension] = await t.sql<{ id: string; type: string; vm_id: string }>(`SELECT id, type, vm_id FROM operations WHERE type = 'ip.unassign' AND params->>'reserved_ip_id' = $1 AND params->>'suspend_at' IS NOT NULL`, [first]);
    expect(suspension).toMatchObject({ type: 'ip.unassign', vm_id: ids.b });
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1, failed: 0 });
    expect(await terms.execute()).toBe(0);
    expect((await get(first)).body).toMatchObject({ status: 'suspended', server_id: null, suspended_at: firstExpires, release_at: at(firstExpires, 120) });
    expect(await serverIp(ids.b)).toBeNull();
    expect(await routed(first)).toBeNull();
    expect(await t.sql(`SELECT actor_type FROM audit_log WHERE action = 'reserved_ip.suspend' AND target_id = $1`, [first])).toEqual([{ actor_type: 'system' }]);
    const refused = await assign(first, ids.b);
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual(errorBody(refused, 'invalid_state', `Reserved IP ${first} is suspended (its term ended); renew it to assign it`, { reason: 'suspended' }));
    expect(await verify()).toEqual([]);

    clock.set(new Date(at(firstExpires, 120)));
    expect(await terms.execute()).toBe(1);
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1, failed: 0 });
    const released = (await get(first)).body;
    expect(released).toMatchObject({ status: 'released', released_reason: 'expired', released_at: at(firstExpires, 120), suspended_at: null, release_at: null });
    expect(await t.sql(`SELECT actor_type, data->>'reason' AS reason FROM audit_log WHERE action = 'reserved_ip.release' AND target_id = $1`, [first])).toEqual([
      { actor_type: 'system', reason: 'expired' },
    ]);
    const events = await t.sql<{ body: string }>(`SELECT body FROM webhook_events WHERE type = 'reserved_ip.released' ORDER BY created_at, id`);
    expect(JSON.parse(events[events.length - 1].body).data).toEqual(released);
    // Back in the pool once cooled down, not before.
    expect(await t.sql(`SELECT reserved_ip_id, available_after FROM reserved_ip_pool WHERE ip = $1`, [firstIp])).toEqual([
      { reserved_ip_id: null, available_after: new Date(at(firstExpires, 120 + 300)) },
    ]);
    expect(await verify()).toEqual([]);
  });
});
