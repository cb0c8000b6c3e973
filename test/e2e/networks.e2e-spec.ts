import { AdvanceOperations } from '../../src/modules/operations/application/advance-operations.use-case';
import { ComputeProvider } from '../../src/modules/servers/application/compute-provider.port';
import { VerifyInvariants } from '../../src/modules/verification/application/verify-invariants.use-case';
import { ReconcileNetworkAttachments } from '../../src/modules/servers/application/reconcile-network-attachments.use-case';
import { FixedClock } from '../../src/shared/kernel/clock/clock';
import { errorBody } from '../support/assertions';
import { usingPostgres } from '../support/database';
import { apiToken, bearer, organization } from '../support/fixtures';
import { IMAGES, ISO, OP_ID, SERVER_PLANS, serverRegion } from '../support/servers';
import { TestApp, startTestApp } from '../support/test-app';
import { expectVerified } from '../support/verify';
import { exhaustRegionIpv6 } from '../support/region-slots';

const NOW = '2026-11-23T10:00:00.000Z';
const NET_ID = /^net_[A-Za-z0-9]{24}$/;

/**
 * IPv6 on every server and private networks between servers (docs/reference/networks.md): the
 * seeded and bought servers' distinct /64s out of the region's prefix (also at the provider); a
 * network's whole life (create, list, get, patch, delete); two servers attached with the address
 * asked for and the first free one (the server, the network, the operation, the provider and the
 * audit rows); every refusal with its envelope; detach; a deleted server detached; verify clean.
 */
describe('networks', () => {
  let t: TestApp;
  let advance: AdvanceOperations;
  let provider: ComputeProvider;
  const clock = new FixedClock(new Date(NOW));
  const rw = bearer(apiToken('nw', 'rw'));
  const ro = bearer(apiToken('nw', 'ro'));
  const other = bearer(apiToken('nx', 'rw'));
  let web: string;
  let db: string;

  const buy = async (name: string, region = 'id-jkt'): Promise<string> => {
    const res = await t.http.post('/v1/servers').set(rw).send({ name, region, plan: 'cx1', image: 'debian-12', term_months: 1, currency: 'USD' });
    expect(res.status).toBe(202);
    return res.body.server.id as string;
  };
  const server = async (id: string) => (await t.http.get(`/v1/servers/${id}`).set(rw)).body;
  const audits = (action: string) => t.sql<{ target_id: string; data: object }>('SELECT target_id, data FROM audit_log WHERE action = $1 ORDER BY seq', [action]);

  beforeAll(async () => {
    t = await startTestApp({}, clock);
    await t.seed({
      server_plans: SERVER_PLANS,
      images: IMAGES,
      regions: [serverRegion('id-jkt', 256, { ipv6_prefix: '2001:db8:10::/48' }), serverRegion('sg-sin', 256, { name: 'Singapore' })],
      organizations: [
        organization('nw', {
          wallet: { USD: '100.00000', IDR: '1500000' },
          api_keys: [
            { name: 'rw', scopes: ['vm:read', 'vm:write'], token: apiToken('nw', 'rw') },
            { name: 'ro', scopes: ['vm:read'], token: apiToken('nw', 'ro') },
          ],
          servers: [{ id: 'vm_nwseeded', name: 'seeded-1', region: 'id-jkt', zone: 'id-jkt-a' }],
          volumes: [],
        }),
        organization('nx', { servers: [], volumes: [] }),
      ],
    });
    advance = t.app.get(AdvanceOperations);
    provider = t.app.get(ComputeProvider);
    web = await buy('web-1');
    db = await buy('db-1');
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 2 });
  });
  afterAll(async () => t?.close());

  it('every server has its own /64 of its region prefix, the first address shown, routed to it at the provider', async () => {
    expect(await server('vm_nwseeded')).toMatchObject({ ipv6: '2001:db8:10:1::1', private_networks: [] });
    expect(await server(web)).toMatchObject({ status: 'running', ipv6: '2001:db8:10:2::1', private_networks: [] });
    expect(await server(db)).toMatchObject({ status: 'running', ipv6: '2001:db8:10:3::1', private_networks: [] });
    expect(await provider.getAddresses(web)).toEqual({ serverId: web, ipv6: '2001:db8:10:2::1', networks: [] });
    expect(await provider.getAddresses('vm_nwseeded')).toEqual({ serverId: 'vm_nwseeded', ipv6: '2001:db8:10:1::1', networks: [] });
    // The other region's prefix is its own (the next free of 2001:db8::/32).
    expect(await t.sql("SELECT id, ipv6_prefix::text AS p FROM regions ORDER BY id")).toEqual([
      { id: 'id-jkt', p: '2001:db8:10::/48' },
      { id: 'sg-sin', p: '2001:db8:1::/48' },
    ]);
    // A firewall verdict asked about an IPv6 peer of the server.
    const verdict = await t.http.get(`/v1/servers/${web}/firewall`).query({ direction: 'in', protocol: 'tcp', port: '22', address: '2001:db8:10:3::1' }).set(rw);
    expect(verdict.status).toBe(200);
    expect(verdict.body.verdict).toEqual({ allowed: false, rule_id: null });
  });

  let backend: string;
  let spare: string;

  it('creates a network: 201 with the whole body, audited; lists, gets and patches it', async () => {
    const res = await t.http.post('/v1/networks').set(rw).send({ name: 'backend', region: 'id-jkt', ip_range: '10.10.0.0/16', labels: { env: 'prod' } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.stringMatching(NET_ID), name: 'backend', region: 'id-jkt', ip_range: '10.10.0.0/16', server_ids: [], labels: { env: 'prod' }, created_at: NOW });
    backend = res.body.id;
    expect(await audits('network.create')).toEqual([{ target_id: backend, data: { name: 'backend', region: 'id-jkt', ip_range: '10.10.0.0/16', labels: { env: 'prod' } } }]);

    clock.set(new Date('2026-11-23T10:00:01.000Z'));
    const second = await t.http.post('/v1/networks').set(rw).send({ name: 'spare', region: 'id-jkt', ip_range: '192.168.4.0/24' });
    expect(second.status).toBe(201);
    spare = second.body.id;

    const list = await t.http.get('/v1/networks').set(ro);
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ networks: [second.body, res.body], next_cursor: null });
    const page = await t.http.get('/v1/networks').query({ limit: '1' }).set(ro);
    expect(page.body.networks).toEqual([second.body]);
    const next = await t.http.get('/v1/networks').query({ limit: '1', cursor: page.body.next_cursor }).set(ro);
    expect(next.body).toEqual({ networks: [res.body], next_cursor: null });
    expect((await t.http.get('/v1/networks').query({ label: 'env=prod' }).set(ro)).body.networks).toEqual([res.body]);
    expect((await t.http.get('/v1/networks').query({ region: 'sg-sin' }).set(ro)).body.networks).toEqual([]);
    expect((await t.http.get(`/v1/networks/${backend}`).set(ro)).body).toEqual(res.body);

    const renamed = await t.http.patch(`/v1/networks/${spare}`).set(rw).send({ name: 'spare-2', labels: { tier: 'b' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual({ ...second.body, name: 'spare-2', labels: { tier: 'b' } });
    expect(await audits('network.update')).toEqual([
      { target_id: spare, data: { changes: { name: { old: 'spare', new: 'spare-2' }, labels: { old: {}, new: { tier: 'b' } } } } },
    ]);
    // Read-only keys, other organizations.
    expect((await t.http.post('/v1/networks').set(ro).send({ name: 'x', region: 'id-jkt', ip_range: '10.20.0.0/16' })).status).toBe(403);
    const hidden = await t.http.get(`/v1/networks/${backend}`).set(other);
    expect(hidden.status).toBe(404);
    expect(hidden.body).toEqual(errorBody(hidden, 'not_found', `Network ${backend} not found`));
  });

  it('refuses a bad range, an overlap, a taken name and an unknown region, naming the member', async () => {
    const post = (body: object) => t.http.post('/v1/networks').set(rw).send(body);
    const cases: [object, number, string, string, object][] = [
      [{ name: 'a', region: 'id-jkt', ip_range: '8.8.0.0/16' }, 400, 'invalid_request',
        'ip_range must be a private IPv4 range (10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16) with a prefix of /16 to /24, given as its network address, e.g. 10.10.0.0/16', { field: 'ip_range' }],
      [{ name: 'a', region: 'id-jkt', ip_range: '10.0.0.0/8' }, 400, 'invalid_request', 'ip_range must have a prefix of /16 to /24; got /8', { field: 'ip_range' }],
      [{ name: 'a', region: 'id-jkt', ip_range: '10.30.1.0/16' }, 400, 'invalid_request', 'ip_range must be given as its network address: 10.30.0.0/16', { field: 'ip_range' }],
      [{ name: '-a', region: 'id-jkt', ip_range: '10.30.0.0/16' }, 400, 'invalid_request',
        'name must be 1 to 64 letters, digits, ".", "_" or "-", starting and ending with a letter or digit', { field: 'name' }],
      [{ name: 'a', region: 'nowhere', ip_range: '10.30.0.0/16' }, 400, 'invalid_request', 'region nowhere does not exist', { field: 'region' }],
      [{ name: 'a', region: 'id-jkt', ip_range: '10.10.128.0/24' }, 409, 'conflict',
        `ip_range 10.10.128.0/24 overlaps network ${backend} (10.10.0.0/16) of the organization in the same region`, { existing_id: backend, field: 'ip_range' }],
      [{ name: 'backend', region: 'sg-sin', ip_range: '10.10.0.0/16' }, 409, 'conflict', 'Network name backend is taken by another network of the organization', { field: 'name' }],
    ];
    for (const [body, status, code, message, details] of cases) {
      const res = await post(body);
      expect({ status: res.status, body: res.body }).toEqual({ status, body: errorBody(res, code, message, details) });
    }
    // The same range in another region, or in another organization, is fine.
    const elsewhere = await post({ name: 'sin', region: 'sg-sin', ip_range: '10.10.0.0/16' });
    expect(elsewhere.status).toBe(201);
    const theirs = await t.http.post('/v1/networks').set(other).send({ name: 'backend', region: 'id-jkt', ip_range: '10.10.0.0/16' });
    expect(theirs.status).toBe(201);
    expect(await t.sql("SELECT count(*)::int AS n FROM networks WHERE org_id = 'org_nw'")).toEqual([{ n: 3 }]);
  });

  it('attaches two servers, one at the address asked for, the other at the first free one; the server, network, operation and provider agree', async () => {
    const a = await t.http.post(`/v1/servers/${web}/networks`).set(rw).send({ network_id: backend, ip: '10.10.0.10' });
    expect(a.status).toBe(202);
    expect(a.headers.location).toBe(`/v1/operations/${a.body.operation.id}`);
    const before = await server(web);
    expect(a.body).toEqual({
      server: before,
      operation: {
        id: expect.stringMatching(OP_ID), type: 'vm.attach_network', status: 'pending', vm_id: web,
        steps: [{ name: 'attaching_network', status: 'pending' }], result: null, error: null, created_at: expect.stringMatching(ISO), finished_at: null,
      },
    });
    // Held from acceptance, shown once attached.
    expect(before.private_networks).toEqual([]);
    const b = await t.http.post(`/v1/servers/${db}/networks`).set(rw).send({ network_id: backend });
    expect(b.status).toBe(202);
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 2 });

    const opA = (await t.http.get(`/v1/operations/${a.body.operation.id}`).set(rw)).body;
    expect(opA).toMatchObject({ status: 'succeeded', steps: [{ name: 'attaching_network', status: 'succeeded' }], result: { server_id: web, network_id: backend, ip: '10.10.0.10' }, error: null });
    const opB = (await t.http.get(`/v1/operations/${b.body.operation.id}`).set(rw)).body;
    expect(opB.result).toEqual({ server_id: db, network_id: backend, ip: '10.10.0.3' });

    expect((await server(web)).private_networks).toEqual([{ network_id: backend, ip: '10.10.0.10' }]);
    expect((await server(db)).private_networks).toEqual([{ network_id: backend, ip: '10.10.0.3' }]);
    expect((await t.http.get(`/v1/networks/${backend}`).set(rw)).body.server_ids).toEqual([web, db].sort());
    expect(await provider.getAddresses(web)).toEqual({ serverId: web, ipv6: '2001:db8:10:2::1', networks: [{ networkId: backend, ip: '10.10.0.10' }] });
    expect(await provider.getAddresses(db)).toEqual({ serverId: db, ipv6: '2001:db8:10:3::1', networks: [{ networkId: backend, ip: '10.10.0.3' }] });
    expect(await audits('server.attach_network')).toEqual([
      { target_id: web, data: { operation_id: a.body.operation.id, network_id: backend, ip: '10.10.0.10' } },
      { target_id: db, data: { operation_id: b.body.operation.id, network_id: backend, ip: '10.10.0.3' } },
    ]);
    await expectVerified(t);
  });

  it('refuses: wrong region, an address outside the range or taken, attached already, a 4th network, a network of another organization', async () => {
    const nets: string[] = [];
    for (const [i, range] of ['10.41.0.0/16', '10.42.0.0/16'].entries()) {
      nets.push((await t.http.post('/v1/networks').set(rw).send({ name: `extra-${i}`, region: 'id-jkt', ip_range: range })).body.id);
    }
    const sin = (await t.http.get('/v1/networks').query({ region: 'sg-sin' }).set(rw)).body.networks[0].id as string;
    const theirs = (await t.http.get('/v1/networks').set(other)).body.networks[0].id as string;
    const attach = (id: string, body: object) => t.http.post(`/v1/servers/${id}/networks`).set(rw).send(body);
    const refusals: [string, object, number, string, string, object][] = [
      [db, { network_id: sin }, 400, 'invalid_request', `network ${sin} is in region sg-sin; server ${db} is in id-jkt`, { field: 'network_id' }],
      [db, { network_id: spare, ip: '192.168.5.7' }, 400, 'invalid_request', `ip 192.168.5.7 is not a usable address of the network's range 192.168.4.0/24`, { field: 'ip' }],
      [db, { network_id: spare, ip: '192.168.4.255' }, 400, 'invalid_request', `ip 192.168.4.255 is not a usable address of the network's range 192.168.4.0/24`, { field: 'ip' }],
      [db, { network_id: spare, ip: 'ten' }, 400, 'invalid_request', 'ip must be one IPv4 address, e.g. 10.10.0.5', { field: 'ip' }],
      [db, { network_id: backend }, 409, 'invalid_state', `Server ${db} is attached to network ${backend} already`, {}],
      [db, { network_id: theirs }, 404, 'not_found', `Network ${theirs} not found`, {}],
      [db, {}, 400, 'invalid_request', 'network_id must be a network id', { field: 'network_id' }],
    ];
    for (const [id, body, status, code, message, details] of refusals) {
      const res = await attach(id, body);
      expect({ status: res.status, body: res.body }).toEqual({ status, body: errorBody(res, code, message, details) });
    }
    // The address another server holds.
    const taken = await attach('vm_nwseeded', { network_id: backend, ip: '10.10.0.3' });
    expect({ status: taken.status, body: taken.body }).toEqual({
      status: 409,
      body: errorBody(taken, 'conflict', `10.10.0.3 is taken in network ${backend} by another server; ask for another address or leave ip out`, { field: 'ip', network_id: backend }),
    });
    // Two more networks for db (3 in all), then a 4th is refused.
    for (const net of nets) {
      expect((await attach(db, { network_id: net })).status).toBe(202);
      await advance.runUntilIdle();
    }
    const fourth = await attach(db, { network_id: spare });
    expect({ status: fourth.status, body: fourth.body }).toEqual({
      status: 409,
      body: errorBody(fourth, 'quota_exceeded', `Server ${db} is attached to 3 networks already; detach one first`, { limit: 3 }),
    });
    expect((await server(db)).private_networks).toEqual(
      [{ network_id: backend, ip: '10.10.0.3' }, { network_id: nets[0], ip: '10.41.0.3' }, { network_id: nets[1], ip: '10.42.0.3' }].sort((x, y) => (x.network_id < y.network_id ? -1 : 1)),
    );
    // Nothing half-written by a refusal: only the accepted attachments' operations exist.
    expect(await t.sql("SELECT count(*)::int AS n FROM operations WHERE type = 'vm.attach_network'")).toEqual([{ n: 4 }]);
    // A network with servers attached is not deleted.
    const del = await t.http.delete(`/v1/networks/${backend}`).set(rw);
    expect({ status: del.status, body: del.body }).toEqual({
      status: 409,
      body: errorBody(del, 'invalid_state', `Network ${backend} has servers attached (${[web, db].sort().join(', ')}); detach them first`),
    });
    // Detach db from the extra networks: their addresses are free again.
    for (const net of nets) {
      const res = await t.http.post(`/v1/servers/${db}/networks/${net}/detach`).set(rw);
      expect(res.status).toBe(202);
      expect(res.body.operation).toMatchObject({ type: 'vm.detach_network', steps: [{ name: 'detaching_network', status: 'pending' }] });
      await advance.runUntilIdle();
      expect((await t.http.delete(`/v1/networks/${net}`).set(rw)).status).toBe(204);
    }
    expect((await server(db)).private_networks).toEqual([{ network_id: backend, ip: '10.10.0.3' }]);
    const notIn = await t.http.post(`/v1/servers/${db}/networks/${spare}/detach`).set(rw);
    expect({ status: notIn.status, body: notIn.body }).toEqual({ status: 404, body: errorBody(notIn, 'not_found', `Server ${db} is not attached to network ${spare}`) });
    expect(await provider.getAddresses(db)).toEqual({ serverId: db, ipv6: '2001:db8:10:3::1', networks: [{ networkId: backend, ip: '10.10.0.3' }] });
    await expectVerified(t);
  });

  it('the reconciliation sweep makes the database follow the provider (an attachment found there recorded, one gone there removed), audited', async () => {
    const sweep = t.app.get(ReconcileNetworkAttachments);
    // The provider holds the seeded server in `spare` (an attach whose answer was lost, say); the database does not.
    await t.sql("INSERT INTO provider_network_attachments (server_id, network_id, ip_range, ip) VALUES ('vm_nwseeded', $1, '192.168.4.0/24', '192.168.4.50')", [spare]);
    const report = await t.app.get(VerifyInvariants).execute();
    expect(report.violations).toEqual([
      {
        check: 'provider.addresses_match_servers', subject: 'vm_nwseeded', message: `the provider holds it in ${spare} at 192.168.4.50 but the database does not`,
        details: { network_id: spare, ip: null, provider_ip: '192.168.4.50' },
      },
    ]);
    expect(await sweep.execute()).toBe(1);
    expect((await server('vm_nwseeded')).private_networks).toEqual([{ network_id: spare, ip: '192.168.4.50' }]);
    await expectVerified(t);
    // Gone at the provider: removed here.
    await t.sql("DELETE FROM provider_network_attachments WHERE server_id = 'vm_nwseeded'");
    expect(await sweep.execute()).toBe(1);
    expect((await server('vm_nwseeded')).private_networks).toEqual([]);
    expect(await sweep.execute()).toBe(0);
    expect(await audits('server.network_reconciled')).toEqual([
      { target_id: 'vm_nwseeded', data: { network_id: spare, reason: 'the server is in the network at the provider', from: null, to: { ip: '192.168.4.50', status: 'attached' } } },
      { target_id: 'vm_nwseeded', data: { network_id: spare, reason: 'the server is not in the network at the provider', from: { ip: '192.168.4.50', status: 'attached' }, to: null } },
    ]);
  });

  it('an attach the provider refuses fails its operation; the address held goes back (the provider read first)', async () => {
    // The provider holds another server at that address (one the database does not know).
    await t.sql("INSERT INTO provider_network_attachments (server_id, network_id, ip_range, ip) VALUES ('vm_ghost', $1, '192.168.4.0/24', '192.168.4.77')", [spare]);
    const res = await t.http.post('/v1/servers/vm_nwseeded/networks').set(rw).send({ network_id: spare, ip: '192.168.4.77' });
    expect(res.status).toBe(202);
    expect(await t.sql('SELECT host(ip) AS ip, status FROM server_networks WHERE server_id = $1', ['vm_nwseeded'])).toEqual([{ ip: '192.168.4.77', status: 'attaching' }]);
    expect(await advance.runUntilIdle()).toMatchObject({ failed: 1 });
    const op = (await t.http.get(`/v1/operations/${res.body.operation.id}`).set(rw)).body;
    expect(op).toMatchObject({
      status: 'failed', steps: [{ name: 'attaching_network', status: 'failed' }], result: null,
      error: { code: 'invalid_state', message: `192.168.4.77 is another server's in network ${spare}` },
    });
    expect(await t.sql('SELECT count(*)::int AS n FROM server_networks WHERE server_id = $1', ['vm_nwseeded'])).toEqual([{ n: 0 }]);
    expect((await server('vm_nwseeded')).private_networks).toEqual([]);
    await t.sql("DELETE FROM provider_network_attachments WHERE server_id = 'vm_ghost'");
  });

  it('a region whose /48 has handed out its last /64 refuses a server purchase 409 out_of_stock naming the region; nothing is written', async () => {
    const [{ used }] = await t.sql<{ used: number }>("SELECT ipv6_subnets_used AS used FROM region_usage WHERE id = 'sg-sin'");
    // The last /64 of the prefix taken (every slot's range used up), as a region that sold 65535 servers.
    const giveBack = await exhaustRegionIpv6(t, 'sg-sin');
    const count = async () =>
      (await t.sql<{ servers: number; operations: number; holds: number; audits: number; reserved: string }>(
        `SELECT (SELECT count(*)::int FROM servers) AS servers, (SELECT count(*)::int FROM operations) AS operations,
                (SELECT count(*)::int FROM wallet_ledger WHERE kind = 'hold') AS holds, (SELECT count(*)::int FROM audit_log) AS audits,
                (SELECT reserved::text FROM wallet_balances WHERE org_id = 'org_nw' AND currency = 'USD') AS reserved`,
      ))[0];
    const before = await count();
    try {
      const res = await t.http.post('/v1/servers').set(rw).send({ name: 'sin-1', region: 'sg-sin', plan: 'cx1', image: 'debian-12', term_months: 1, currency: 'USD' });
      expect({ status: res.status, body: res.body }).toEqual({
        status: 409,
        body: errorBody(res, 'out_of_stock', 'Region sg-sin has no IPv6 /64 left for a new server; nothing was reserved. Choose another region'),
      });
      expect(await count()).toEqual(before);
      expect(await t.sql("SELECT ipv6_subnets_used AS used, vcpus_used::int AS vcpus_used FROM region_usage WHERE id = 'sg-sin'")).toEqual([{ used: 65535, vcpus_used: 0 }]);
    } finally {
      await giveBack();
    }
    // With its /64s back, the region sells again: the next /64.
    const ok = await t.http.post('/v1/servers').set(rw).send({ name: 'sin-1', region: 'sg-sin', plan: 'cx1', image: 'debian-12', term_months: 1, currency: 'USD' });
    expect(ok.status).toBe(202);
    expect(ok.body.server.ipv6).toBe(`2001:db8:1:${(used + 1).toString(16)}::1`);
    await advance.runUntilIdle();
  });

  it('deleting a server detaches it; then the network can be deleted', async () => {
    for (const id of [web, db]) {
      const res = await t.http.delete(`/v1/servers/${id}`).set(rw);
      expect(res.status).toBe(202);
    }
    await advance.runUntilIdle();
    for (const id of [web, db]) expect(await server(id)).toMatchObject({ status: 'deleted', ipv6: null, private_networks: [] });
    expect((await t.http.get(`/v1/networks/${backend}`).set(rw)).body.server_ids).toEqual([]);
    expect(await t.sql('SELECT count(*)::int AS n FROM provider_network_attachments WHERE server_id = ANY($1)', [[web, db]])).toEqual([{ n: 0 }]);
    const del = await t.http.delete(`/v1/networks/${backend}`).set(rw);
    expect(del.status).toBe(204);
    expect((await t.http.get(`/v1/networks/${backend}`).set(rw)).status).toBe(404);
    expect(await audits('network.delete')).toHaveLength(3);
    // A new server takes the next /64 (addresses are not reused).
    const next = await buy('web-2');
    await advance.runUntilIdle();
    expect(await server(next)).toMatchObject({ status: 'running', ipv6: '2001:db8:10:4::1' });
    await expectVerified(t);
  });
});

/**
 * Two servers asking for the same private address at once: the address is held at acceptance
 * under the unique (network, ip) index, so one request is accepted and the other refused 409
 * conflict, and verify stays clean. Only PostgreSQL can show the race.
 */
const describeOnPostgres = usingPostgres() ? describe : describe.skip;

describeOnPostgres('networks under concurrency (PostgreSQL)', () => {
  let t: TestApp;
  const rw = bearer(apiToken('nc', 'rw'));

  beforeAll(async () => {
    t = await startTestApp({ rateLimitPerMinute: 100000 });
    await t.seed({
      server_plans: SERVER_PLANS,
      images: IMAGES,
      regions: [serverRegion('id-jkt', 256)],
      organizations: [organization('nc', { wallet: { USD: '100.00000', IDR: '1500000' }, servers: [], volumes: [] })],
    });
  });
  afterAll(async () => t?.close());

  it('the same address asked for by two servers at once: one is accepted, the other refused 409; verify clean', async () => {
    const ids: string[] = [];
    for (const name of ['a-1', 'a-2']) {
      const res = await t.http.post('/v1/servers').set(rw).send({ name, region: 'id-jkt', plan: 'cx1', image: 'debian-12', term_months: 1, currency: 'USD' });
      ids.push(res.body.server.id);
    }
    await t.app.get(AdvanceOperations).runUntilIdle();
    const net = (await t.http.post('/v1/networks').set(rw).send({ name: 'race', region: 'id-jkt', ip_range: '10.50.0.0/24' })).body.id as string;
    const [x, y] = await Promise.all(ids.map((id) => t.http.post(`/v1/servers/${id}/networks`).set(rw).send({ network_id: net, ip: '10.50.0.9' })));
    expect([x.status, y.status].sort()).toEqual([202, 409]);
    const loser = x.status === 409 ? x : y;
    expect(loser.body).toEqual(errorBody(loser, 'conflict', `10.50.0.9 is taken in network ${net} by another server; ask for another address or leave ip out`, { field: 'ip', network_id: net }));
    await t.app.get(AdvanceOperations).runUntilIdle();
    const winner = (x.status === 202 ? x : y).body.server.id as string;
    expect((await t.http.get(`/v1/networks/${net}`).set(rw)).body.server_ids).toEqual([winner]);
    expect(await t.sql("SELECT count(*)::int AS n FROM operations WHERE type = 'vm.attach_network'")).toEqual([{ n: 1 }]);
    await expectVerified(t);
  });
});
