import { AdvanceOperations } from '../../src/modules/operations/application/advance-operations.use-case';
import { ComputeGateway } from '../../src/modules/servers/application/compute-gateway';
import { FixedClock } from '../../src/shared/kernel/clock/clock';
import { errorBody } from '../support/assertions';
import { apiToken, bearer, organization, region } from '../support/fixtures';
import { IMAGES, OP_ID, SERVER_PLANS, VM_ID, serverRegion } from '../support/servers';
import { SSH_KEYS } from '../support/ssh-keys';
import { TestApp, startTestApp } from '../support/test-app';

const NOW = '2026-11-23T10:00:00.000Z';

/**
 * POST /v1/servers (servers.md "Server and buying"): the 202 with its whole body and Location,
 * the state it leaves (server, vCPUs, wallet and ledger, operation and its params, audit), the
 * worker taking it through creating_instance, booting and ready to a running server with its
 * ipv4 and the hold captured; then every error in the check order with its whole envelope.
 */
describe('POST /v1/servers (purchase)', () => {
  let t: TestApp;
  let advance: AdvanceOperations;
  const clock = new FixedClock(new Date(NOW));
  const rw = bearer(apiToken('sp', 'rw'));
  const poor = bearer(apiToken('spp', 'rw'));
  let keyA: string;
  let keyB: string;

  beforeAll(async () => {
    t = await startTestApp({}, clock);
    await t.seed({
      server_plans: SERVER_PLANS,
      images: IMAGES,
      regions: [serverRegion('id-jkt', 256), serverRegion('sg-sin', 3), region('au-syd')],
      organizations: [
        organization('sp'),
        organization('spp', { wallet: { USD: '5.00000', IDR: '0' } }),
        organization('spx'),
        // 25 seeded servers, one of them deleted: 24 live.
        organization('spq', {
          volumes: [],
          servers: Array.from({ length: 25 }, (_, i) => ({ id: `vm_spq${i}`, name: `s-${i}`, region: 'id-jkt', zone: 'id-jkt-a' })),
        }),
      ],
    });
    advance = t.app.get(AdvanceOperations);
    keyA = (await t.http.post('/v1/ssh-keys').set(rw).send({ name: 'alice', public_key: SSH_KEYS.ed.line })).body.id;
    keyB = (await t.http.post('/v1/ssh-keys').set(rw).send({ name: 'bob', public_key: SSH_KEYS.e256.line })).body.id;
  });
  afterAll(async () => t?.close());

  const buy = (body: object, headers = rw) => t.http.post('/v1/servers').set(headers).send(body);
  const balances = (org = 'org_sp') => t.sql(`SELECT currency, available::text, reserved::text FROM wallet_balances WHERE org_id = $1 ORDER BY currency`, [org]);
  const vcpusUsed = async (id = 'id-jkt') => (await t.sql<{ u: string }>('SELECT vcpus_used::text AS u FROM region_usage WHERE id = $1', [id]))[0].u;
  const counts = async () =>
    (
      await t.sql<{ servers: number; operations: number; ledger: number; audit: number }>(
        `SELECT (SELECT count(*)::int FROM servers) AS servers, (SELECT count(*)::int FROM operations) AS operations,
                (SELECT count(*)::int FROM wallet_ledger) AS ledger, (SELECT count(*)::int FROM audit_log WHERE action = 'server.create') AS audit`,
      )
    )[0];
  const ok = { name: 'web-2', region: 'id-jkt', plan: 'cx2', image: 'ubuntu-24.04', term_months: 3, currency: 'USD' };

  it('202 {server, operation} with Location; the worker makes it running with its ipv4 and captures the hold', async () => {
    const userData = '#cloud-config\npackages: [nginx]\n';
    const res = await buy({ ...ok, ssh_key_ids: [keyB, keyA], user_data: userData, labels: { env: 'prod' } });
    expect(res.status).toBe(202);
    const serverId = res.body.server.id;
    const opId = res.body.operation.id;
    expect(res.headers.location).toBe(`/v1/operations/${opId}`);
    expect(res.body).toEqual({
      server: {
        id: expect.stringMatching(VM_ID),
        name: 'web-2',
        status: 'creating',
        region: 'id-jkt',
        zone: 'id-jkt-a',
        plan: 'cx2',
        vcpus: 2,
        memory_gb: 4,
        disk_gb: 80,
        image: 'ubuntu-24.04',
        ipv4: null,
        reserved_ip: null,
        // The next /64 of the region's prefix (2001:db8:1::/48, the first region's default).
        ipv6: expect.stringMatching(/^2001:db8:1:[0-9a-f]{1,4}::1$/),
        private_networks: [],
        term_months: 3,
        billing: { currency: 'USD', amount: '27.00000' },
        price_per_month: { USD: '9.00000', IDR: '144000' },
        expires_at: '2027-02-23T10:00:00.000Z',
        labels: { env: 'prod' },
        delete_protection: false,
        volume_ids: [],
        ssh_key_ids: [keyB, keyA],
        created_at: NOW,
        deleted_at: null,
        deleted_reason: null, suspended_at: null, release_at: null, auto_renew: { enabled: false, term_months: null, last_attempt: null, next_attempt_at: null },
      },
      operation: {
        id: expect.stringMatching(OP_ID),
        type: 'vm.create',
        status: 'pending',
        vm_id: serverId,
        steps: [
          { name: 'payment_reserved', status: 'succeeded' },
          { name: 'creating_instance', status: 'pending' },
          { name: 'booting', status: 'pending' },
          { name: 'ready', status: 'pending' },
        ],
        result: null,
        error: null,
        created_at: NOW,
        finished_at: null,
      },
    });
    expect(await balances()).toEqual([
      { currency: 'IDR', available: '1500000', reserved: '0' },
      { currency: 'USD', available: '7300000', reserved: '2700000' },
    ]);
    expect(await vcpusUsed()).toBe('2');
    expect(await t.sql(`SELECT kind, currency, amount::text FROM wallet_ledger WHERE operation_id = $1`, [opId])).toEqual([{ kind: 'hold', currency: 'USD', amount: '2700000' }]);
    const [params] = await t.sql<{ params: Record<string, unknown> }>('SELECT params FROM operations WHERE id = $1', [opId]);
    expect(params.params).toEqual({
      zone_id: 'id-jkt-a', plan_id: 'cx2', vcpus: 2, memory_gb: 4, disk_gb: 80, image: 'ubuntu-24.04', term_months: 3, currency: 'USD', amount: '27.00000',
      ssh_keys: [
        { id: keyB, fingerprint: SSH_KEYS.e256.fingerprint, public_key: SSH_KEYS.e256.line },
        { id: keyA, fingerprint: SSH_KEYS.ed.fingerprint, public_key: SSH_KEYS.ed.line },
      ],
      user_data: userData,
    });
    const audit = await t.sql<{ actor_type: string; target_id: string; ip_address: string; data: object }>(
      `SELECT actor_type, target_id, ip_address, data FROM audit_log WHERE action = 'server.create'`,
    );
    expect(audit).toEqual([
      {
        actor_type: 'api_key', target_id: serverId, ip_address: '127.0.0.1',
        data: {
          operation_id: opId, name: 'web-2', region: 'id-jkt', zone: 'id-jkt-a', plan: 'cx2', image: 'ubuntu-24.04', term_months: 3, currency: 'USD',
          amount: '27.00000', ssh_key_ids: [keyB, keyA], user_data_bytes: Buffer.byteLength(userData), labels: { env: 'prod' }, delete_protection: false, quote_id: null,
        },
      },
    ]);
    expect(JSON.stringify(audit)).not.toContain('nginx');

    clock.advance(5_000);
    expect(await advance.runUntilIdle()).toMatchObject({ claimed: 1, succeeded: 1, failed: 0 });
    const instance = await t.app.get(ComputeGateway).getInstance(serverId);
    expect(instance).toMatchObject({ serverId, zoneId: 'id-jkt-a', vcpus: 2, memoryGb: 4, diskGb: 80, image: 'ubuntu-24.04', power: 'running' });
    const ipv4 = instance!.ipv4;
    const op = await t.http.get(`/v1/operations/${opId}`).set(rw);
    expect(op.status).toBe(200);
    expect(op.body).toEqual({
      id: opId,
      type: 'vm.create',
      status: 'succeeded',
      vm_id: serverId,
      steps: [
        { name: 'payment_reserved', status: 'succeeded' },
        { name: 'creating_instance', status: 'succeeded' },
        { name: 'booting', status: 'succeeded' },
        { name: 'ready', status: 'succeeded' },
      ],
      result: { server_id: serverId, ipv4, expires_at: '2027-02-23T10:00:05.000Z', charged: { currency: 'USD', amount: '27.00000' } },
      error: null,
      created_at: NOW,
      finished_at: '2026-11-23T10:00:05.000Z',
    });
    const server = await t.http.get(`/v1/servers/${serverId}`).set(rw);
    expect(server.body).toEqual({ ...res.body.server, status: 'running', ipv4, expires_at: '2027-02-23T10:00:05.000Z' });
    expect(await balances()).toEqual([
      { currency: 'IDR', available: '1500000', reserved: '0' },
      { currency: 'USD', available: '7300000', reserved: '0' },
    ]);
    expect(await t.sql(`SELECT kind, amount::text FROM wallet_ledger WHERE operation_id = $1 ORDER BY id`, [opId])).toEqual([
      { kind: 'hold', amount: '2700000' },
      { kind: 'capture', amount: '2700000' },
    ]);
    // user_data is gone from the stored params once the instance was made; the keys stay.
    const [after] = await t.sql<{ params: Record<string, unknown> }>('SELECT params FROM operations WHERE id = $1', [opId]);
    expect(after.params).not.toHaveProperty('user_data');
    expect(after.params.ssh_keys).toHaveLength(2);
    expect(await vcpusUsed()).toBe('2');
  });


  it('Idempotency-Key: the same purchase again replays the 202 byte for byte (Idempotent-Replayed), one server, one hold', async () => {
    const body = { ...ok, name: 'idem-buy', plan: 'cx1', term_months: 1 };
    const first = await buy(body).set('Idempotency-Key', 'buy-once');
    expect(first.status).toBe(202);
    const before = await counts();
    const again = await buy(body).set('Idempotency-Key', 'buy-once');
    expect(again.status).toBe(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers.location).toBe(first.headers.location);
    expect(again.text).toBe(first.text);
    expect(await counts()).toEqual(before);
    expect(await t.sql(`SELECT count(*)::int AS n FROM servers WHERE org_id = 'org_sp' AND name = 'idem-buy'`)).toEqual([{ n: 1 }]);
    await advance.runUntilIdle();
    // A keyed purchase naming an SSH key deleted since still replays; a new key is the 400.
    const key = (await t.http.post('/v1/ssh-keys').set(rw).send({ name: 'short-lived', public_key: SSH_KEYS.e384.line })).body.id;
    const withKey = { ...body, name: 'idem-key', ssh_key_ids: [key] };
    const keyed = await buy(withKey).set('Idempotency-Key', 'buy-with-key');
    expect(keyed.status).toBe(202);
    expect((await t.http.delete(`/v1/ssh-keys/${key}`).set(rw)).status).toBe(204);
    const replayed = await buy(withKey).set('Idempotency-Key', 'buy-with-key');
    expect([replayed.status, replayed.headers['idempotent-replayed'], replayed.text]).toEqual([202, 'true', keyed.text]);
    const fresh = await buy({ ...withKey, name: 'idem-key-2' }).set('Idempotency-Key', 'buy-with-key-2');
    expect(fresh.body).toEqual(errorBody(fresh, 'invalid_request', `ssh_key_ids[0]: ${key} is no SSH key of the organization`, { field: 'ssh_key_ids[0]' }));
    await advance.runUntilIdle();
  });

  describe('server quotes', () => {
    const quote = (body: object) => t.http.post('/v1/quotes').set(rw).send(body);
    const serverQuote = { region: 'id-jkt', plan: 'cx4', term_months: 12, currency: 'IDR' };

    it('POST /v1/quotes with plan: 201 kind server with the frozen price; GET reads it; disk quotes show kind volume', async () => {
      const res = await quote(serverQuote);
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.stringMatching(/^quo_/),
        kind: 'server',
        region: 'id-jkt',
        plan: 'cx4',
        term_months: 12,
        currency: 'IDR',
        price_per_month: { USD: '18.00000', IDR: '288000' },
        amount: '3456000',
        created_at: clock.now().toISOString(),
        expires_at: new Date(clock.now().getTime() + 600_000).toISOString(),
        used_at: null,
      });
      expect((await t.http.get(`/v1/quotes/${res.body.id}`).set(rw)).body).toEqual(res.body);
      const disk = await quote({ region: 'id-jkt', size_gb: 100, term_months: 1, currency: 'USD' });
      expect(disk.body).toMatchObject({ kind: 'volume', type: 'premium', size_gb: 100 });
    });

    it('400: type or size_gb beside plan, a term not sold; 404: region without servers, plan not sold', async () => {
      const typed = await quote({ ...serverQuote, type: 'ssd' });
      expect(typed.body).toEqual(errorBody(typed, 'invalid_request', 'type is a member of disk quotes; a server quote (with plan) takes region, plan, term_months and currency', { field: 'type' }));
      const sized = await quote({ ...serverQuote, size_gb: 10 });
      expect(sized.body).toEqual(errorBody(sized, 'invalid_request', 'size_gb is a member of disk quotes; a server quote (with plan) takes region, plan, term_months and currency', { field: 'size_gb' }));
      const none = await quote({ ...serverQuote, region: 'au-syd' });
      expect(none.body).toEqual(errorBody(none, 'not_found', 'Region au-syd sells no servers'));
      const plan = await quote({ ...serverQuote, plan: 'cx9' });
      expect(plan.body).toEqual(errorBody(plan, 'not_found', 'Plan cx9 is not sold in id-jkt'));
    });

    it('a purchase with a server quote pays its price; the other kind is 400 naming quote_id; a differing member 400; used 409; expired 409', async () => {
      const q = (await quote({ ...serverQuote, plan: 'cx1', term_months: 1, currency: 'USD' })).body;
      const disk = (await quote({ region: 'id-jkt', size_gb: 100, term_months: 1, currency: 'USD' })).body;
      const withDisk = await buy({ ...ok, name: 'q-1', plan: 'cx1', term_months: 1, quote_id: disk.id });
      expect(withDisk.body).toEqual(errorBody(withDisk, 'invalid_request', `quote_id ${disk.id} is a disk quote; a server purchase needs a server quote (POST /v1/quotes with plan)`, { field: 'quote_id' }));
      const volume = await t.http.post('/v1/volumes').set(rw).send({ name: 'qv-1', region: 'id-jkt', size_gb: 100, term_months: 1, currency: 'USD', quote_id: q.id });
      expect(volume.body).toEqual(errorBody(volume, 'invalid_request', `quote_id ${q.id} is a server quote; a disk purchase needs a disk quote (POST /v1/quotes with type and size_gb)`, { field: 'quote_id' }));
      const differs = await buy({ ...ok, name: 'q-1', plan: 'cx2', term_months: 1, quote_id: q.id });
      expect(differs.body).toEqual(errorBody(differs, 'invalid_request', `plan ("cx2") differs from quote ${q.id} ("cx1"); send the quote's plan or leave out quote_id`, { field: 'plan' }));
      // The quote's price applies even after the offer's price changed.
      await t.sql(`UPDATE server_offer_plans SET price_usd_minor = 999999 WHERE region_id = 'id-jkt' AND plan_id = 'cx1'`);
      const paid = await buy({ ...ok, name: 'q-1', plan: 'cx1', term_months: 1, quote_id: q.id });
      expect(paid.status).toBe(202);
      expect(paid.body.server).toMatchObject({ billing: { currency: 'USD', amount: '4.50000' }, price_per_month: { USD: '4.50000', IDR: '72000' } });
      expect((await t.http.get(`/v1/quotes/${q.id}`).set(rw)).body.used_at).toBe(clock.now().toISOString());
      const again = await buy({ ...ok, name: 'q-2', plan: 'cx1', term_months: 1, quote_id: q.id });
      expect(again.body).toEqual(errorBody(again, 'invalid_state', expect.stringMatching(new RegExp(`^Quote ${q.id} was already used by a purchase at `))));
      await t.sql(`UPDATE server_offer_plans SET price_usd_minor = 450000 WHERE region_id = 'id-jkt' AND plan_id = 'cx1'`);
      const old = (await quote({ ...serverQuote, plan: 'cx1', term_months: 1, currency: 'USD' })).body;
      clock.advance(600_001);
      const expired = await buy({ ...ok, name: 'q-3', plan: 'cx1', term_months: 1, quote_id: old.id });
      expect(expired.body).toEqual(errorBody(expired, 'quote_expired', `Quote ${old.id} expired at ${old.expires_at} (quotes last 10 minutes); request a new one`));
      await advance.runUntilIdle();
    });
  });

  describe('errors, in the check order', () => {
    it('400 naming the member: missing, wrong type, rule, term not sold, zone of another region, ssh key, user_data', async () => {
      const cases: [object, string, string][] = [
        [{ ...ok, name: undefined }, 'name', 'name is required'],
        [{ ...ok, plan: 5 }, 'plan', 'plan must be a string'],
        [{ ...ok, name: '-bad' }, 'name', 'name must be 1 to 63 letters, digits, "." or "-", starting and ending with a letter or digit'],
        [{ ...ok, term_months: 2 }, 'term_months', 'term_months must be 1, 3 or 12'],
        [{ ...ok, zone: 'sg-sin-a' }, 'zone', 'zone sg-sin-a is in region sg-sin, not in id-jkt'],
        [{ ...ok, ssh_key_ids: [keyA, 'ssh_nope'] }, 'ssh_key_ids[1]', 'ssh_key_ids[1]: ssh_nope is no SSH key of the organization'],
        [{ ...ok, ssh_key_ids: [keyA, keyA] }, 'ssh_key_ids[1]', `ssh_key_ids[1] repeats ${keyA}: the ids must be distinct`],
        [{ ...ok, user_data: 'a\u0000b' }, 'user_data', 'user_data must not contain NUL (\\u0000) characters'],
        [{ ...ok, user_data: 'x'.repeat(32769) }, 'user_data', 'user_data must be at most 32768 bytes of UTF-8; got 32769'],
      ];
      const before = await counts();
      for (const [body, field, message] of cases) {
        const res = await buy(body);
        expect({ field, status: res.status, body: res.body }).toEqual({ field, status: 400, body: errorBody(res, 'invalid_request', message, { field }) });
      }
      // The key of another organization is no key of this one.
      const other = await buy({ ...ok, ssh_key_ids: [keyA] }, bearer(apiToken('spx', 'rw')));
      expect(other.body).toEqual(errorBody(other, 'invalid_request', `ssh_key_ids[0]: ${keyA} is no SSH key of the organization`, { field: 'ssh_key_ids[0]' }));
      expect(await counts()).toEqual(before);
    });

    it('400 comes before 409 idempotency_conflict, which comes before 404', async () => {
      const first = await buy({ ...ok, name: 'idem-1', plan: 'nope' }).set('Idempotency-Key', 'k-order');
      expect(first.status).toBe(404);
      const bad = await buy({ ...ok, name: 'idem-2', ssh_key_ids: ['ssh_nope'] }).set('Idempotency-Key', 'k-order');
      expect(bad.body).toEqual(errorBody(bad, 'invalid_request', 'ssh_key_ids[0]: ssh_nope is no SSH key of the organization', { field: 'ssh_key_ids[0]' }));
      const conflict = await buy({ ...ok, name: 'idem-2', plan: 'nope' }).set('Idempotency-Key', 'k-order');
      expect(conflict.status).toBe(409);
      expect(conflict.body.error.code).toBe('idempotency_conflict');
      const replay = await buy({ ...ok, name: 'idem-1', plan: 'nope' }).set('Idempotency-Key', 'k-order');
      expect(replay.status).toBe(404);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.text).toBe(first.text);
    });

    it('400 for a region or zone that does not exist, naming the member with details.valid; nothing written', async () => {
      const before = await counts();
      const regions = (await t.sql<{ id: string }>('SELECT id FROM regions ORDER BY id COLLATE "C"')).map((r) => r.id);
      const zones = (await t.sql<{ id: string }>(`SELECT id FROM zones WHERE region_id = 'id-jkt' ORDER BY id`)).map((r) => r.id);
      expect(regions.length).toBeGreaterThan(1);
      expect(zones.length).toBeGreaterThan(1);
      const region = await buy({ ...ok, region: 'xx-nope' });
      expect({ status: region.status, body: region.body }).toEqual({
        status: 400,
        body: errorBody(region, 'invalid_request', `region xx-nope is no region; valid: ${regions.join(', ')}`, { field: 'region', valid: regions }),
      });
      const zone = await buy({ ...ok, zone: 'id-jkt-z' });
      expect({ status: zone.status, body: zone.body }).toEqual({
        status: 400,
        body: errorBody(zone, 'invalid_request', `zone id-jkt-z is no zone of region id-jkt; valid: ${zones.join(', ')}`, { field: 'zone', valid: zones }),
      });
      expect(await counts()).toEqual(before);
    });

    it('404: region without servers, plan, image, quote', async () => {
      const cases: [object, string][] = [
        [{ ...ok, region: 'au-syd' }, 'Region au-syd sells no servers'],
        [{ ...ok, plan: 'cx9' }, 'Plan cx9 is not sold in id-jkt'],
        [{ ...ok, image: 'windows' }, 'Image windows not found'],
        [{ ...ok, quote_id: 'quo_nope' }, 'Quote quo_nope not found'],
      ];
      const before = await counts();
      for (const [body, message] of cases) {
        const res = await buy(body);
        expect({ status: res.status, body: res.body }).toEqual({ status: 404, body: errorBody(res, 'not_found', message) });
      }
      expect(await counts()).toEqual(before);
    });

    it('409 conflict (name taken, details.existing_id), out_of_stock (zone, vCPUs), in that order', async () => {
      const existing = (await t.sql<{ id: string }>(`SELECT id FROM servers WHERE org_id = 'org_sp' AND name = 'web-1'`))[0].id;
      const before = await counts();
      const taken = await buy({ ...ok, name: 'web-1', zone: 'id-jkt-b' });
      expect(taken.status).toBe(409);
      expect(taken.body).toEqual(errorBody(taken, 'conflict', 'Server name web-1 is taken by another server of the organization', { existing_id: existing }));
      const zone = await buy({ ...ok, name: 'web-3', zone: 'id-jkt-b' });
      expect(zone.body).toEqual(errorBody(zone, 'out_of_stock', 'Zone id-jkt-b does not accept new servers at the moment; choose another zone'));
      const full = await buy({ ...ok, name: 'web-3', region: 'sg-sin', plan: 'cx4' });
      expect(full.body).toEqual(errorBody(full, 'out_of_stock', 'Region sg-sin has fewer than 4 free vCPUs for plan cx4'));
      expect(await counts()).toEqual(before);
      expect(await vcpusUsed('sg-sin')).toBe('0');
    });

    it('409 quota_exceeded at 25 live servers (seeded and creating ones counted, deleted ones not), details.limit; before 402', async () => {
      const quota = bearer(apiToken('spq', 'rw'));
      await t.sql(`UPDATE servers SET deleted_at = now() WHERE id = 'vm_spq0'`);
      const first = await buy({ ...ok, name: 'q-25', plan: 'cx1', term_months: 1 }, quota);
      expect(first.status).toBe(202);
      const before = await counts();
      await t.sql(`UPDATE wallet_balances SET available = 0 WHERE org_id = 'org_spq'`);
      const res = await buy({ ...ok, name: 'q-26', plan: 'cx1', term_months: 1 }, quota);
      expect(res.status).toBe(409);
      expect(res.body).toEqual(
        errorBody(res, 'quota_exceeded', 'The organization already holds 25 servers that are not deleted (creating and deleting ones included); delete one first', { limit: 25 }),
      );
      expect(await counts()).toEqual(before);
    });

    it('402 insufficient_balance with details, nothing reserved', async () => {
      const before = await counts();
      const res = await buy({ ...ok, plan: 'cx1', term_months: 12 }, poor);
      expect(res.status).toBe(402);
      expect(res.body).toEqual(
        errorBody(res, 'insufficient_balance', 'The wallet cannot cover 54.00000 USD; available: 5.00000 USD', { required: '54.00000', available: '5.00000', currency: 'USD' }),
      );
      expect(await counts()).toEqual(before);
      expect(await balances('org_spp')).toEqual([{ currency: 'USD', available: '500000', reserved: '0' }]);
    });

    it('403 for a read-only caller, 401 without a token', async () => {
      const none = await t.http.post('/v1/servers').send(ok);
      expect(none.status).toBe(401);
    });
  });
});
