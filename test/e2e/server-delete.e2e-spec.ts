import { AdvanceOperations } from '../../src/modules/operations/application/advance-operations.use-case';
import { ComputeProvider } from '../../src/modules/servers/application/compute-provider.port';
import { ReconcileDeletingServers } from '../../src/modules/servers/application/reconcile-deleting-servers.use-case';
import { VerifyInvariants } from '../../src/modules/verification/application/verify-invariants.use-case';
import { OWNER_PASSWORD, apiToken, bearer, organization, region } from '../support/fixtures';
import { setComputeProviderDown as setComputeDown, setProviderDown } from '../support/provider';
import { TestApp, startTestApp } from '../support/test-app';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const OP_ID = /^op_[A-Za-z0-9]+$/;

const ERROR = (res: { headers: Record<string, string> }, code: string, message: string, details: object = {}) => ({
  error: { code, message, request_id: res.headers['x-request-id'], details },
});

const disk = (id: string, name: string, server: string | null) => ({
  id, name, type: 'premium', region: 'id-jkt', zone: 'id-jkt-a', size_gb: 10, term_months: 1, currency: 'USD',
  expires_at: '2027-01-21T00:00:00.000Z', ...(server ? { server, mount_path: `/mnt/${name}` } : {}),
});

/**
 * DELETE /v1/servers/{id} (servers.md "Power, renewal, deletion" and "The compute provider and
 * the operations"), both engines: the 202 and its operation; the worker's vm.delete to its end
 * (disks detached and kept with their term, the instance gone, the server deleted with ipv4 null
 * and its vCPUs back, its own firewall rules deleted, server.deleted in the outbox, every audit
 * row); the 409s in their order; 503 with the compute provider down recording nothing; a refused
 * unmount restoring the former status; the disks of a deleting server.
 */
describe('DELETE /v1/servers/{id}', () => {
  let t: TestApp;
  const rw = bearer(apiToken('sd', 'rw'));
  const other = bearer(apiToken('sx', 'rw'));
  const hooks = bearer(apiToken('sd', 'hooks'));
  let owner: { Authorization: string };
  let viewer: { Authorization: string };

  beforeAll(async () => {
    t = await startTestApp({ providerRetryBaseMs: 1, providerRetryWindowMs: 0, webhookAllowPrivateUrls: true });
    const base = organization('sd', { wallet: { USD: '100.00000', IDR: '1500000' } });
    await t.seed({
      server_plans: [{ id: 'cx2', vcpus: 2, memory_gb: 4, disk_gb: 80 }],
      images: [{ id: 'debian-12', name: 'Debian 12', type: 'system' }],
      regions: [
        region('id-jkt', {
          zones: [{ id: 'id-jkt-a', available: true }],
          server_offer: { vcpu_capacity: 16, terms: [1], plans: [{ plan: 'cx2', price_per_month: { USD: '9.00000', IDR: '144000' } }] },
        }),
      ],
      organizations: [
        {
          ...base,
          members: [
            { email: 'owner@sd.test', password: OWNER_PASSWORD, role: 'owner' },
            { email: 'viewer@sd.test', password: OWNER_PASSWORD, role: 'viewer' },
          ],
          api_keys: [...base.api_keys, { name: 'hooks', scopes: ['webhooks:write'], token: apiToken('sd', 'hooks') }],
          servers: ['web1', 'web2', 'web3', 'web4', 'web5', 'web6', 'web7', 'web9'].map((n) => ({ id: `vm_sd${n}`, name: n, region: 'id-jkt', zone: 'id-jkt-a' })),
          volumes: [
            disk('vol_sdd1', 'd1', 'vm_sdweb1'),
            disk('vol_sdd2', 'd2', 'vm_sdweb1'),
            disk('vol_sdf1', 'f1', 'vm_sdweb5'),
            disk('vol_sdf2', 'f2', 'vm_sdweb5'),
            disk('vol_sdg1', 'g1', 'vm_sdweb6'),
            disk('vol_sdh1', 'h1', 'vm_sdweb7'),
            disk('vol_sdloose', 'loose', null),
          ],
        },
        organization('sx', { volumes: [] }),
      ],
    });
    const login = async (email: string) => bearer((await t.http.post('/v1/auth/login').send({ email, password: OWNER_PASSWORD })).body.token);
    owner = await login('owner@sd.test');
    viewer = await login('viewer@sd.test');
  });
  afterAll(async () => t?.close());
  afterEach(async () => {
    if (t.settings.providerDown) {
      await setProviderDown(t, false);
      await setComputeDown(t, false);
    }
  });

  const runWorker = () => t.app.get(AdvanceOperations).runUntilIdle();
  const getServer = async (id: string) => (await t.http.get(`/v1/servers/${id}`).set(rw)).body;
  const getVolume = async (id: string) => (await t.http.get(`/v1/volumes/${id}`).set(rw)).body;
  const getOp = async (id: string) => (await t.http.get(`/v1/operations/${id}`).set(rw)).body;
  const audit = async (query: string) => (await t.http.get(`/v1/audit-log?${query}`).set(owner).expect(200)).body.entries as Record<string, unknown>[];
  const vcpusUsed = async () => (await t.sql<{ u: number }>("SELECT vcpus_used::int AS u FROM region_usage WHERE id = 'id-jkt'"))[0].u;
  const counts = async () =>
    (await t.sql<{ ops: number; audits: number; keys: number }>(
      `SELECT (SELECT count(*)::int FROM operations) AS ops, (SELECT count(*)::int FROM audit_log) AS audits,
              (SELECT count(*)::int FROM idempotency_records) AS keys`,
    ))[0];
  const providerDisk = async (volumeId: string) =>
    (await t.sql(`SELECT server_id, mount_path, mounted, deleted_at IS NOT NULL AS deleted FROM provider_disks WHERE volume_id = $1`, [volumeId]))[0];
  const pendingOp = (id: string, vmId: string, steps: string[]) => ({
    id, type: 'vm.delete', status: 'pending', vm_id: vmId, steps: steps.map((name) => ({ name, status: 'pending' })),
    result: null, error: null, created_at: expect.stringMatching(ISO), finished_at: null,
  });

  it('a server with two disks: 202 deleting; detaching_volumes, deleting_instance; the disks kept available, the rules gone, server.deleted', async () => {
    // Its own firewall rule and an organization-wide one (which stays).
    const own = await t.http.post('/v1/firewall-rules').set(rw).send({ direction: 'in', protocol: 'tcp', port: '22', sources: ['0.0.0.0/0'], server_id: 'vm_sdweb1' });
    expect(own.status).toBe(201);
    const wide = await t.http.post('/v1/firewall-rules').set(rw).send({ direction: 'in', protocol: 'tcp', port: '443', sources: ['0.0.0.0/0'] });
    expect(wide.status).toBe(201);
    const endpoint = await t.http.post('/v1/webhook-endpoints').set(hooks).send({ url: 'https://192.0.2.10/hook', events: ['server.deleted'] });
    expect(endpoint.status).toBe(201);

    const before = await getServer('vm_sdweb1');
    expect(before).toMatchObject({ status: 'running', ipv4: expect.any(String), volume_ids: ['vol_sdd1', 'vol_sdd2'] });
    const d1 = await getVolume('vol_sdd1');
    const d2 = await getVolume('vol_sdd2');
    expect(await t.app.get(ComputeProvider).getInstance('vm_sdweb1')).toMatchObject({ serverId: 'vm_sdweb1', ipv4: before.ipv4 });

    const res = await t.http.delete('/v1/servers/vm_sdweb1').set(rw).set('Idempotency-Key', 'sd-del-1');
    expect(res.status).toBe(202);
    expect(res.headers.location).toBe(`/v1/operations/${res.body.operation.id}`);
    expect(res.body).toEqual({
      server: { ...before, status: 'deleting' },
      operation: pendingOp(expect.stringMatching(OP_ID) as unknown as string, 'vm_sdweb1', ['detaching_volumes', 'deleting_instance']),
    });
    const opId: string = res.body.operation.id;
    expect(await getServer('vm_sdweb1')).toEqual({ ...before, status: 'deleting' });
    const [accepted] = await audit('action=server.delete&target_id=vm_sdweb1');
    expect(accepted).toMatchObject({ action: 'server.delete', actor: { type: 'api_key' }, target: { type: 'server', id: 'vm_sdweb1' }, data: { operation_id: opId, volume_ids: ['vol_sdd1', 'vol_sdd2'] } });
    // The same key again: the stored 202, byte for byte.
    const replay = await t.http.delete('/v1/servers/vm_sdweb1').set(rw).set('Idempotency-Key', 'sd-del-1');
    expect(replay.status).toBe(202);
    expect(replay.text).toBe(res.text);
    expect(replay.headers['idempotent-replayed']).toBe('true');

    await runWorker();
    const op = await getOp(opId);
    expect(op).toEqual({
      ...res.body.operation,
      status: 'succeeded',
      steps: [{ name: 'detaching_volumes', status: 'succeeded' }, { name: 'deleting_instance', status: 'succeeded' }],
      result: { server_id: 'vm_sdweb1', detached_volume_ids: ['vol_sdd1', 'vol_sdd2'], deleted_at: expect.stringMatching(ISO) },
      finished_at: expect.stringMatching(ISO),
    });
    // Still readable: deleted, ipv4 null, no volumes.
    const gone = await t.http.get('/v1/servers/vm_sdweb1').set(rw);
    expect(gone.status).toBe(200);
    expect(gone.body).toEqual({ ...before, status: 'deleted', ipv4: null, ipv6: null, volume_ids: [], deleted_at: op.result.deleted_at, deleted_reason: 'customer' });
    // The disks: available with their data and term, at the provider detached too.
    for (const d of [d1, d2]) {
      expect(await getVolume(d.id)).toEqual({ ...d, status: 'available', server: null, mount_path: null, mounted: false });
      expect(await providerDisk(d.id)).toEqual({ server_id: null, mount_path: null, mounted: false, deleted: false });
    }
    const detaches = await audit('action=volume.detach');
    expect(detaches.map((e) => [e.target, e.actor, e.ip, e.data])).toEqual(
      ['vol_sdd2', 'vol_sdd1'].map((id) => [
        { type: 'volume', id }, accepted.actor, accepted.ip,
        { operation_id: opId, server_id: 'vm_sdweb1', mount_path: `/mnt/${id === 'vol_sdd1' ? 'd1' : 'd2'}`, reason: 'server_deleted' },
      ]),
    );
    // The instance is gone at the provider.
    expect(await t.app.get(ComputeProvider).getInstance('vm_sdweb1')).toBeNull();
    // Its own rule deleted and audited; the organization-wide one stays.
    expect(await t.sql("SELECT id FROM firewall_rules WHERE org_id = 'org_sd' ORDER BY id")).toEqual([{ id: wide.body.id }]);
    const ruleAudit = await audit(`action=firewall_rule.delete&target_id=${own.body.id}`);
    expect(ruleAudit.map((e) => [e.actor, e.ip, (e.data as { reason: string }).reason])).toEqual([[accepted.actor, accepted.ip, 'server_deleted']]);
    // server.deleted: the Server as GET returns it, one delivery for the subscribed endpoint.
    const events = await t.sql<{ id: string; body: string }>("SELECT id, body FROM webhook_events WHERE org_id = 'org_sd' AND type = 'server.deleted'");
    expect(events).toHaveLength(1);
    expect(JSON.parse(events[0].body)).toEqual({ id: events[0].id, type: 'server.deleted', created_at: op.result.deleted_at, data: gone.body });
    expect(await t.sql('SELECT endpoint_id, event_type, status FROM webhook_deliveries WHERE event_id = $1', [events[0].id])).toEqual([
      { endpoint_id: endpoint.body.webhook_endpoint.id, event_type: 'server.deleted', status: 'pending' },
    ]);
    // A detached disk attaches to another server.
    const attach = await t.http.post('/v1/volumes/vol_sdd1/attach').set(rw).send({ server_id: 'vm_sdweb2' });
    expect(attach.status).toBe(202);
    await runWorker();
    expect(await getVolume('vol_sdd1')).toEqual({ ...d1, server: { id: 'vm_sdweb2', name: 'web2' } });
    // Deleted: 409 invalid_state (no operation in the way any more).
    const again = await t.http.delete('/v1/servers/vm_sdweb1').set(rw);
    expect(again.status).toBe(409);
    expect(again.body).toEqual(ERROR(again, 'invalid_state', 'Server vm_sdweb1 is deleted'));
    // A PATCH too.
    expect((await t.http.patch('/v1/servers/vm_sdweb1').set(rw).send({ name: 'x' })).status).toBe(409);
  });

  it('a bought server without disks: one step, its vCPUs given back', async () => {
    await t.sql(
      `INSERT INTO servers (id, org_id, name, region_id, zone_id, plan_id, vcpus, memory_gb, disk_gb, image_id, ipv4, term_months,
                            billing_currency, billing_amount, price_usd_minor, price_idr_minor, expires_at, status)
       VALUES ('vm_sdbought', 'org_sd', 'app-1', 'id-jkt', 'id-jkt-a', 'cx2', 2, 4, 80, 'debian-12', '100.64.9.9', 1, 'USD', 900000,
               900000, 144000, now() + interval '1 month', 'stopped')`,
    );
    expect(await vcpusUsed()).toBe(2);
    const before = await getServer('vm_sdbought');
    const res = await t.http.delete('/v1/servers/vm_sdbought').set(rw);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ server: { ...before, status: 'deleting' }, operation: pendingOp(res.body.operation.id, 'vm_sdbought', ['deleting_instance']) });
    // Still counted until the deletion succeeds.
    expect(await vcpusUsed()).toBe(2);
    const wallet = (await t.http.get('/v1/wallet').set(rw)).body;
    await runWorker();
    const op = await getOp(res.body.operation.id);
    expect(op).toEqual({
      ...res.body.operation, status: 'succeeded', steps: [{ name: 'deleting_instance', status: 'succeeded' }],
      result: { server_id: 'vm_sdbought', detached_volume_ids: [], deleted_at: expect.stringMatching(ISO) }, finished_at: expect.stringMatching(ISO),
    });
    expect(await getServer('vm_sdbought')).toEqual({ ...before, status: 'deleted', ipv4: null, ipv6: null, deleted_at: op.result.deleted_at, deleted_reason: 'customer' });
    expect(await vcpusUsed()).toBe(0);
    // No refund.
    expect((await t.http.get('/v1/wallet').set(rw)).body).toEqual(wallet);
  });

  it('409 invalid_state in order: an unfinished operation (before the status rule), deleted or deleting, delete_protection, status; 404, 403', async () => {
    // An unfinished volume operation on the server is named, even with delete_protection on.
    expect((await t.http.patch('/v1/servers/vm_sdweb7').set(rw).send({ delete_protection: true })).status).toBe(200);
    const detach = await t.http.post('/v1/volumes/vol_sdh1/detach').set(rw);
    expect(detach.status).toBe(202);
    const busy = await t.http.delete('/v1/servers/vm_sdweb7').set(rw).set('Idempotency-Key', 'sd-busy');
    expect(busy.status).toBe(409);
    expect(busy.body).toEqual(ERROR(busy, 'invalid_state', `Server vm_sdweb7 has an operation pending or running (${detach.body.operation.id}); wait for it to end`, { operation_id: detach.body.operation.id }));
    await runWorker();
    // The stored 409 is replayed with the same key, even now that the detach has ended.
    const busyAgain = await t.http.delete('/v1/servers/vm_sdweb7').set(rw).set('Idempotency-Key', 'sd-busy');
    expect(busyAgain.status).toBe(409);
    expect(busyAgain.body).toEqual(busy.body);
    // delete_protection on.
    const protectedRes = await t.http.delete('/v1/servers/vm_sdweb7').set(rw);
    expect(protectedRes.status).toBe(409);
    expect(protectedRes.body).toEqual(ERROR(protectedRes, 'invalid_state', 'Server vm_sdweb7 has delete_protection on; turn it off (PATCH) before deleting it'));
    expect((await getServer('vm_sdweb7')).status).toBe('running');
    // Deleting: a second DELETE names the vm.delete in the way.
    const first = await t.http.delete('/v1/servers/vm_sdweb3').set(rw);
    expect(first.status).toBe(202);
    const second = await t.http.delete('/v1/servers/vm_sdweb3').set(rw);
    expect(second.status).toBe(409);
    expect(second.body).toEqual(ERROR(second, 'invalid_state', `Server vm_sdweb3 has an operation pending or running (${first.body.operation.id}); wait for it to end`, { operation_id: first.body.operation.id }));
    await runWorker();
    expect((await getOp(first.body.operation.id)).status).toBe('succeeded');
    // `deleting` with no operation left (a deletion whose provider could not be read), and a status neither running nor stopped.
    await t.sql("UPDATE servers SET status = 'deleting' WHERE id = 'vm_sdweb4'");
    const stuck = await t.http.delete('/v1/servers/vm_sdweb4').set(rw);
    expect(stuck.body).toEqual(ERROR(stuck, 'invalid_state', 'Server vm_sdweb4 is already being deleted'));
    await t.sql("UPDATE servers SET status = 'starting' WHERE id = 'vm_sdweb4'");
    const starting = await t.http.delete('/v1/servers/vm_sdweb4').set(rw);
    expect(starting.status).toBe(409);
    expect(starting.body).toEqual(ERROR(starting, 'invalid_state', 'Server vm_sdweb4 is starting; only a running, stopped or suspended server can be deleted'));
    await t.sql("UPDATE servers SET status = 'running' WHERE id = 'vm_sdweb4'");
    // 404: unknown, another organization's; 403: a viewer; 401.
    const unknown = await t.http.delete('/v1/servers/vm_nope').set(rw);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual(ERROR(unknown, 'not_found', 'Server vm_nope not found'));
    const foreign = await t.http.delete('/v1/servers/vm_sdweb4').set(other);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(ERROR(foreign, 'not_found', 'Server vm_sdweb4 not found'));
    const denied = await t.http.delete('/v1/servers/vm_sdweb4').set(viewer);
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual(ERROR(denied, 'forbidden', 'Role viewer may not do this; it needs one of: developer, admin, owner'));
    expect((await t.http.delete('/v1/servers/vm_sdweb4')).status).toBe(401);
    // 409 idempotency_conflict before 404: the key of another request.
    const conflict = await t.http.delete('/v1/servers/vm_nope').set(rw).set('Idempotency-Key', 'sd-busy');
    expect(conflict.status).toBe(409);
    expect(conflict.body.error.code).toBe('idempotency_conflict');
    expect((await getServer('vm_sdweb4')).status).toBe('running');
  });

  it('two DELETEs at once (different keys): one 202, the other 409 naming its operation; one vm.delete', async () => {
    const replies = await Promise.all([1, 2].map((i) => t.http.delete('/v1/servers/vm_sdweb4').set(rw).set('Idempotency-Key', `sd-race-${i}`)));
    const won = replies.filter((r) => r.status === 202);
    const lost = replies.filter((r) => r.status === 409);
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    const opId = won[0].body.operation.id;
    expect(lost[0].body).toEqual(ERROR(lost[0], 'invalid_state', `Server vm_sdweb4 has an operation pending or running (${opId}); wait for it to end`, { operation_id: opId }));
    expect(await t.sql("SELECT id FROM operations WHERE type = 'vm.delete' AND vm_id = 'vm_sdweb4'")).toEqual([{ id: opId }]);
    await runWorker();
    expect((await getServer('vm_sdweb4')).status).toBe('deleted');
  });

  it('503 provider_unavailable while the compute provider is down, recording nothing', async () => {
    const before = await getServer('vm_sdweb2');
    const written = await counts();
    await setComputeDown(t, true);
    const res = await t.http.delete('/v1/servers/vm_sdweb2').set(rw).set('Idempotency-Key', 'sd-down');
    expect(res.status).toBe(503);
    expect(res.body).toEqual(ERROR(res, 'provider_unavailable', 'The compute provider is unavailable; nothing was recorded. Retry later'));
    expect(await getServer('vm_sdweb2')).toEqual(before);
    expect(await counts()).toEqual(written);
    await setComputeDown(t, false);
    // The same key executes anew once the provider is back.
    const retried = await t.http.delete('/v1/servers/vm_sdweb2').set(rw).set('Idempotency-Key', 'sd-down');
    expect(retried.status).toBe(202);
    await runWorker();
    expect((await getOp(retried.body.operation.id)).status).toBe('succeeded');
  });

  it('a refused unmount fails the operation: the disk detached before stays detached, the other attached, the server running again', async () => {
    const before = await getServer('vm_sdweb5');
    const f1 = await getVolume('vol_sdf1');
    const f2 = await getVolume('vol_sdf2');
    const res = await t.http.delete('/v1/servers/vm_sdweb5').set(rw);
    expect(res.status).toBe(202);
    // The provider refuses the second disk's unmount: it no longer has that disk.
    await t.sql("UPDATE provider_disks SET deleted_at = now(), server_id = NULL, mount_path = NULL, mounted = false WHERE volume_id = 'vol_sdf2'");
    await runWorker();
    expect(await getOp(res.body.operation.id)).toEqual({
      ...res.body.operation,
      status: 'failed',
      steps: [{ name: 'detaching_volumes', status: 'failed' }, { name: 'deleting_instance', status: 'pending' }],
      error: { code: 'invalid_state', message: 'The storage provider has no disk for volume vol_sdf2' },
      finished_at: expect.stringMatching(ISO),
    });
    expect(await getServer('vm_sdweb5')).toEqual({ ...before, volume_ids: ['vol_sdf2'] });
    expect(await getVolume('vol_sdf1')).toEqual({ ...f1, status: 'available', server: null, mount_path: null, mounted: false });
    expect(await getVolume('vol_sdf2')).toEqual(f2);
    expect((await audit('action=volume.detach&target_id=vol_sdf1')).map((e) => (e.data as { reason: string }).reason)).toEqual(['server_deleted']);
    expect(await audit('action=volume.detach&target_id=vol_sdf2')).toEqual([]);
    expect(await t.app.get(ComputeProvider).getInstance('vm_sdweb5')).toMatchObject({ serverId: 'vm_sdweb5' });
  });

  it('the storage provider unavailable through the retry window: nothing detached, the server running again', async () => {
    const before = await getServer('vm_sdweb6');
    const g1 = await getVolume('vol_sdg1');
    const res = await t.http.delete('/v1/servers/vm_sdweb6').set(rw);
    expect(res.status).toBe(202);
    t.settings.providerDown = true; // storage and compute calls fail; the circuits are still closed
    await runWorker();
    t.settings.providerDown = false;
    expect(await getOp(res.body.operation.id)).toMatchObject({
      status: 'failed',
      steps: [{ name: 'detaching_volumes', status: 'failed' }, { name: 'deleting_instance', status: 'pending' }],
      error: { code: 'provider_unavailable', message: 'The storage provider stayed unavailable for 0 minutes: The storage provider is down (PROVIDER_DOWN)' },
    });
    expect(await getServer('vm_sdweb6')).toEqual(before);
    expect(await getVolume('vol_sdg1')).toEqual(g1);
  });

  it('the compute provider unreadable after deleting_instance was tried: the server stays deleting, cli verify reports it, the reconciliation sweep settles it', async () => {
    const before = await getServer('vm_sdweb9');
    const res = await t.http.delete('/v1/servers/vm_sdweb9').set(rw);
    expect(res.status).toBe(202);
    t.settings.providerDown = true; // the call and the read of the instance both fail
    await runWorker();
    t.settings.providerDown = false;
    expect(await getOp(res.body.operation.id)).toEqual({
      ...res.body.operation,
      status: 'failed',
      steps: [{ name: 'deleting_instance', status: 'failed' }],
      error: { code: 'provider_unavailable', message: 'The compute provider stayed unavailable for 0 minutes: The compute provider is down (PROVIDER_DOWN)' },
      finished_at: expect.stringMatching(ISO),
    });
    // Never concluded as "nothing happened": it may be gone at the provider.
    expect(await getServer('vm_sdweb9')).toEqual({ ...before, status: 'deleting' });
    const report = await t.app.get(VerifyInvariants).execute();
    expect(report.violations.filter((v) => v.check.startsWith('servers.'))).toEqual([
      {
        check: 'servers.deleting_has_operation',
        subject: 'vm_sdweb9',
        message: 'server is deleting but no vm.delete operation is unfinished (its instance could not be read when the deletion failed)',
        details: { org_id: 'org_sd' },
      },
    ]);
    // The reconciliation sweep reads the instance again: still unreadable, nothing is settled.
    const sweep = t.app.get(ReconcileDeletingServers);
    t.settings.providerDown = true;
    expect(await sweep.execute()).toBe(0);
    t.settings.providerDown = false;
    expect((await getServer('vm_sdweb9')).status).toBe('deleting');
    // Readable again, the instance gone (the deletion had taken effect): the server is deleted, audited by the system.
    await t.app.get(ComputeProvider).deleteInstance({ serverId: 'vm_sdweb9', step: 'test/gone' });
    expect(await sweep.execute()).toBe(1);
    const gone = await getServer('vm_sdweb9');
    expect(gone).toEqual({ ...before, status: 'deleted', ipv4: null, ipv6: null, deleted_at: expect.stringMatching(ISO), deleted_reason: 'customer' });
    expect((await audit('action=server.reconciled&target_id=vm_sdweb9')).map((e) => [e.actor, e.data])).toEqual([
      [{ type: 'system', id: null, name: null }, { operation_id: res.body.operation.id, reason: 'the instance was deleted at the provider', from: { status: 'deleting' }, to: { status: 'deleted' } }],
    ]);
    const events = await t.sql<{ body: string }>("SELECT body FROM webhook_events WHERE type = 'server.deleted' AND body::jsonb -> 'data' ->> 'id' = 'vm_sdweb9'");
    expect(events.map((e) => JSON.parse(e.body).data)).toEqual([gone]);
    expect(await sweep.execute()).toBe(0);
    expect((await t.app.get(VerifyInvariants).execute()).violations.filter((v) => v.check.startsWith('servers.'))).toEqual([]);
  });

  it('cli verify: a live disk on a deleted server, a succeeded vm.delete whose server is not deleted', async () => {
    const ours = async () => (await t.app.get(VerifyInvariants).execute()).violations.filter((v) => v.check.startsWith('servers.'));
    expect(await ours()).toEqual([]);
    const [op] = await t.sql<{ id: string }>("SELECT id FROM operations WHERE type = 'vm.delete' AND vm_id = 'vm_sdbought' AND status = 'succeeded'");
    await t.sql("UPDATE volumes SET server_id = 'vm_sdweb1', status = 'attached', mount_path = '/mnt/x', mounted = true WHERE id = 'vol_sdd2'");
    await t.sql("UPDATE servers SET deleted_at = NULL, status = 'running', ipv4 = '100.64.9.10', ipv6 = '2001:db8:1:ff::1' WHERE id = 'vm_sdbought'");
    expect(await ours()).toEqual([
      {
        check: 'servers.no_disk_on_deleted_server',
        subject: 'vol_sdd2',
        message: 'live volume (attached) is attached to the deleted server vm_sdweb1',
        details: { org_id: 'org_sd', server_id: 'vm_sdweb1' },
      },
      {
        check: 'servers.deleted_by_succeeded_delete',
        subject: op.id,
        message: 'succeeded vm.delete left server vm_sdbought running with ipv4 100.64.9.10',
        details: { org_id: 'org_sd', server_id: 'vm_sdbought', status: 'running', ipv4: '100.64.9.10' },
      },
    ]);
    // Its vCPUs are counted again with it: the counter check agrees with the rows.
    expect(await vcpusUsed()).toBe(2);
    await t.sql("UPDATE volumes SET server_id = NULL, status = 'available', mount_path = NULL, mounted = false WHERE id = 'vol_sdd2'");
    await t.sql("UPDATE servers SET deleted_at = now() WHERE id = 'vm_sdbought'");
    expect(await ours()).toEqual([]);
    expect(await vcpusUsed()).toBe(0);
  });

  it("a deleting server takes no disk, and its disks refuse detach and delete naming the vm.delete", async () => {
    // A server with a disk, its deletion accepted and not yet run.
    await t.sql("INSERT INTO servers (id, org_id, name, region_id, zone_id) VALUES ('vm_sdweb8', 'org_sd', 'web8', 'id-jkt', 'id-jkt-a')");
    const attach = await t.http.post('/v1/volumes/vol_sdloose/attach').set(rw).send({ server_id: 'vm_sdweb8' });
    expect(attach.status).toBe(202);
    await runWorker();
    const loose = await getVolume('vol_sdloose');
    expect(loose).toMatchObject({ status: 'attached', server: { id: 'vm_sdweb8', name: 'web8' } });
    const del = await t.http.delete('/v1/servers/vm_sdweb8').set(rw);
    expect(del.status).toBe(202);
    const opId = del.body.operation.id;

    const detach = await t.http.post('/v1/volumes/vol_sdloose/detach').set(rw);
    expect(detach.status).toBe(409);
    expect(detach.body).toEqual(ERROR(detach, 'invalid_state', `Volume vol_sdloose is on server vm_sdweb8, which is being deleted (${opId}); the deletion detaches it`, { operation_id: opId }));
    const remove = await t.http.delete('/v1/volumes/vol_sdloose?detach=true').set(rw);
    expect(remove.status).toBe(409);
    expect(remove.body).toEqual(ERROR(remove, 'invalid_state', `Volume vol_sdloose is on server vm_sdweb8, which is being deleted (${opId}); the deletion detaches it`, { operation_id: opId }));
    // Attaching another disk to it, or buying one for it: 409.
    const other = await t.http.post('/v1/volumes/vol_sdd2/attach').set(rw).send({ server_id: 'vm_sdweb8' });
    expect(other.status).toBe(409);
    expect(other.body).toEqual(ERROR(other, 'invalid_state', 'Server vm_sdweb8 is deleting and cannot take a disk'));
    const bought = await t.http.post('/v1/volumes').set(rw).send({ name: 'late', region: 'id-jkt', size_gb: 10, term_months: 1, currency: 'USD', server_id: 'vm_sdweb8' });
    expect(bought.status).toBe(409);
    expect(bought.body).toEqual(ERROR(bought, 'invalid_state', 'Server vm_sdweb8 is deleting and cannot take a disk'));
    // volume-options leaves it out.
    const options = (await t.http.get('/v1/volume-options?region=id-jkt').set(rw)).body;
    expect(options.zones.flatMap((z: { servers: { id: string }[] }) => z.servers.map((s) => s.id))).not.toContain('vm_sdweb8');
    expect(await getVolume('vol_sdloose')).toEqual(loose);

    await runWorker();
    expect((await getOp(opId)).status).toBe('succeeded');
    expect(await getVolume('vol_sdloose')).toEqual({ ...loose, status: 'available', server: null, mount_path: null, mounted: false });
  });
});
