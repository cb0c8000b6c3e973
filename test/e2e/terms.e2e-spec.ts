import { VerifyInvariants } from '../../src/modules/verification/application/verify-invariants.use-case';
import { AdvanceOperations } from '../../src/modules/operations/application/advance-operations.use-case';
import { ExpireTerms } from '../../src/modules/terms/application/expire-terms.use-case';
import { SendExpiryNotices } from '../../src/modules/terms/application/send-expiry-notices.use-case';
import { FixedClock } from '../../src/shared/kernel/clock/clock';
import { errorBody } from '../support/assertions';
import { apiToken, bearer, organization } from '../support/fixtures';
import { IMAGES, OP_ID, SERVER_PLANS, serverRegion } from '../support/servers';
import { TestApp, startTestApp } from '../support/test-app';

const NOW = '2026-11-23T10:00:00.000Z';
/** When the release test ends; the notices test starts there. */
const LAST = '2026-12-23T10:02:00.000Z';
const at = (iso: string, seconds: number) => new Date(new Date(iso).getTime() + seconds * 1000).toISOString();

/**
 * terms.md, on one app with a fixed clock moved past the deadlines (retention in seconds): the
 * expiry sweep suspends a volume on a server (volume.suspend: unmounting, detaching;
 * previous_server_id), a detached one (suspending) and a bought server (vm.suspend: powered off at
 * the provider), each once, audited by actor system, announced; a suspended resource refuses its
 * actions with details.reason "suspended" while GET, PATCH and lists work; what has not expired is
 * left alone.
 */
describe('terms: expiry and suspension', () => {
  let t: TestApp;
  let advance: AdvanceOperations;
  let expire: ExpireTerms;
  const clock = new FixedClock(new Date(NOW));
  const rw = bearer(apiToken('trm', 'rw'));
  let serverId: string;
  let serverExpiresAt: string;
  let protectedId: string;

  beforeAll(async () => {
    t = await startTestApp({ serverRetentionS: 60, volumeRetentionS: 120, webhookAllowPrivateUrls: true }, clock);
    const base = organization('trm');
    await t.seed({
      server_plans: SERVER_PLANS,
      images: IMAGES,
      regions: [serverRegion('id-jkt', 256)],
      organizations: [
        {
          ...base,
          api_keys: [...base.api_keys, { name: 'hooks', scopes: ['webhooks:write'], token: apiToken('trm', 'hooks') }],
          volumes: [
            { ...base.volumes[0], expires_at: at(NOW, 3600) },
            { ...base.volumes[0], id: 'vol_trmfree1', name: 'free-1', server: undefined, mount_path: undefined, expires_at: at(NOW, 3600) },
            { ...base.volumes[0], id: 'vol_trmlater1', name: 'later-1', server: undefined, mount_path: undefined },
            { ...base.volumes[0], id: 'vol_trmkeep1', name: 'keep-1', server: undefined, mount_path: undefined, expires_at: '2027-06-01T00:00:00.000Z' },
            { ...base.volumes[0], id: 'vol_ntca', name: 'in-10-days', server: undefined, mount_path: undefined, expires_at: at(LAST, 10 * 86_400) },
            { ...base.volumes[0], id: 'vol_ntcb', name: 'in-2-days', server: undefined, mount_path: undefined, expires_at: at(LAST, 2 * 86_400) },
          ],
        },
      ],
    });
    advance = t.app.get(AdvanceOperations);
    expire = t.app.get(ExpireTerms);
    const hook = await t.http.post('/v1/webhook-endpoints').set(bearer(apiToken('trm', 'hooks'))).send({ url: 'http://127.0.0.1:9/hook', events: ['*'] });
    expect(hook.status).toBe(201);
    const res = await t.http.post('/v1/servers').set(rw).send({ name: 'app-1', region: 'id-jkt', plan: 'cx1', image: 'debian-12', term_months: 1, currency: 'USD' });
    expect(res.status).toBe(202);
    serverId = res.body.server.id;
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1 });
    serverExpiresAt = (await t.http.get(`/v1/servers/${serverId}`).set(rw)).body.expires_at;
    expect(serverExpiresAt).toBe('2026-12-23T10:00:00.000Z');
    // A second server, protected, stopped, with a disk of a longer term: released at the end.
    const second = await t.http.post('/v1/servers').set(rw).send({ name: 'app-2', region: 'id-jkt', plan: 'cx1', image: 'debian-12', term_months: 1, currency: 'USD', delete_protection: true });
    expect(second.status).toBe(202);
    protectedId = second.body.server.id;
    await advance.runUntilIdle();
    expect((await t.http.post(`/v1/servers/${protectedId}/stop`).set(rw).send({ force: true })).status).toBe(202);
    expect((await t.http.post('/v1/volumes/vol_trmkeep1/attach').set(rw).send({ server_id: protectedId })).status).toBe(202);
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 2 });
  });
  afterAll(async () => t?.close());

  const volume = async (id: string) => (await t.http.get(`/v1/volumes/${id}`).set(rw)).body;
  const server = async () => (await t.http.get(`/v1/servers/${serverId}`).set(rw)).body;
  const operationsOf = (column: 'volume_id' | 'vm_id', id: string, type: string) =>
    t.sql<{ id: string; status: string }>(`SELECT id, status FROM operations WHERE ${column} = $1 AND type = $2 ORDER BY created_at`, [id, type]);
  const audits = (action: string) =>
    t.sql<{ actor_type: string; actor_id: string | null; target_id: string; data: Record<string, unknown> }>(
      'SELECT actor_type, actor_id, target_id, data FROM audit_log WHERE action = $1 ORDER BY seq',
      [action],
    );
  const events = (type: string) => t.sql<{ body: string }>('SELECT body FROM webhook_events WHERE type = $1 ORDER BY created_at, id', [type]);

  it('before expires_at nothing is due: the fields are null, nothing is suspended', async () => {
    clock.set(new Date(at(NOW, 3599)));
    expect(await expire.execute()).toBe(0);
    const v = await volume('vol_trmdata1');
    expect(v).toMatchObject({ status: 'attached', suspended_at: null, release_at: null, previous_server_id: null, deleted_reason: null });
    expect(await server()).toMatchObject({ status: 'running', suspended_at: null, release_at: null, deleted_reason: null });
  });

  it('at expires_at: the attached volume is suspended at once, volume.suspend unmounts and detaches it (previous_server_id); the available one is suspended in one step', async () => {
    const now = at(NOW, 3600);
    clock.set(new Date(now));
    // Two sweeps at once (on PostgreSQL, two connections): each volume suspended once.
    const [a, b] = await Promise.all([expire.execute(), expire.execute()]);
    expect(a + b).toBe(2);
    expect(await expire.execute()).toBe(0);

    const during = await volume('vol_trmdata1');
    expect(during).toMatchObject({ status: 'suspended', suspended_at: now, release_at: at(now, 120), previous_server_id: 'vm_trmweb1', server: { id: 'vm_trmweb1', name: 'web-1' } });
    const [op] = await operationsOf('volume_id', 'vol_trmdata1', 'volume.suspend');
    expect(op).toEqual({ id: expect.stringMatching(OP_ID), status: 'pending' });
    const pending = await t.http.get(`/v1/operations/${op.id}`).set(rw);
    expect(pending.body).toEqual({
      id: op.id,
      type: 'volume.suspend',
      status: 'pending',
      vm_id: 'vm_trmweb1',
      volume_id: 'vol_trmdata1',
      steps: [{ name: 'unmounting', status: 'pending' }, { name: 'detaching', status: 'pending' }],
      result: null,
      error: null,
      created_at: now,
      finished_at: null,
    });

    // The available volume's volume.suspend ended in the sweep itself: the worker runs the attached one's only.
    expect(await advance.runUntilIdle()).toMatchObject({ claimed: 1, succeeded: 1 });
    const done = await t.http.get(`/v1/operations/${op.id}`).set(rw);
    expect(done.body).toMatchObject({
      status: 'succeeded',
      steps: [{ name: 'unmounting', status: 'succeeded' }, { name: 'detaching', status: 'succeeded' }],
      result: { volume_id: 'vol_trmdata1', suspended_at: now, release_at: at(now, 120), previous_server_id: 'vm_trmweb1' },
    });
    expect(await volume('vol_trmdata1')).toMatchObject({
      status: 'suspended', server: null, mount_path: null, mounted: false, previous_server_id: 'vm_trmweb1', suspended_at: now, release_at: at(now, 120),
    });
    const disk = await t.sql('SELECT server_id, mounted FROM provider_disks WHERE volume_id = $1 AND deleted_at IS NULL', ['vol_trmdata1']);
    expect(disk).toEqual([{ server_id: null, mounted: false }]);

    const [free] = await operationsOf('volume_id', 'vol_trmfree1', 'volume.suspend');
    const freeOp = (await t.http.get(`/v1/operations/${free.id}`).set(rw)).body;
    expect(freeOp).toEqual({
      id: free.id,
      type: 'volume.suspend',
      status: 'succeeded',
      vm_id: null,
      volume_id: 'vol_trmfree1',
      steps: [{ name: 'suspending', status: 'succeeded' }],
      result: { volume_id: 'vol_trmfree1', suspended_at: now, release_at: at(now, 120), previous_server_id: null },
      error: null,
      created_at: now,
      finished_at: now,
    });
    // Its operation.succeeded event, recorded by the sweep as the worker records the others'.
    const succeeded = (await events('operation.succeeded')).map((e) => JSON.parse(e.body)).filter((e) => e.data.type === 'volume.suspend');
    expect(succeeded.map((e) => [e.data.id, e.data.status]).sort()).toEqual([[free.id, 'succeeded'], [op.id, 'succeeded']].sort());
    expect(succeeded.find((e) => e.data.id === free.id)).toMatchObject({ type: 'operation.succeeded', created_at: now, data: freeOp });
    expect(await volume('vol_trmfree1')).toMatchObject({ status: 'suspended', previous_server_id: null });
    expect(await volume('vol_trmlater1')).toMatchObject({ status: 'available', suspended_at: null });

    expect(await audits('volume.suspend')).toEqual([
      { actor_type: 'system', actor_id: null, target_id: expect.any(String), data: { operation_id: expect.stringMatching(OP_ID), suspended_at: now, release_at: at(now, 120) } },
      { actor_type: 'system', actor_id: null, target_id: expect.any(String), data: { operation_id: expect.stringMatching(OP_ID), suspended_at: now, release_at: at(now, 120) } },
    ]);
    expect((await audits('volume.suspend')).map((a) => a.target_id).sort()).toEqual(['vol_trmdata1', 'vol_trmfree1']);
    const suspended = (await events('volume.suspended')).map((e) => JSON.parse(e.body));
    expect(suspended.map((e) => [e.type, e.data.id, e.data.status]).sort()).toEqual([
      ['volume.suspended', 'vol_trmdata1', 'suspended'],
      ['volume.suspended', 'vol_trmfree1', 'suspended'],
    ]);
  });

  it('a suspended volume refuses attach and detach (409, details.reason suspended); GET, PATCH and the lists work', async () => {
    const attach = await t.http.post('/v1/volumes/vol_trmfree1/attach').set(rw).send({ server_id: serverId });
    expect(attach.status).toBe(409);
    expect(attach.body).toEqual(errorBody(attach, 'invalid_state', 'Volume vol_trmfree1 is suspended (its term ended); renew it to attach it', { reason: 'suspended' }));
    const detach = await t.http.post('/v1/volumes/vol_trmdata1/detach').set(rw).send({});
    expect(detach.status).toBe(409);
    expect(detach.body).toEqual(errorBody(detach, 'invalid_state', 'Volume vol_trmdata1 is suspended (its term ended); renew it to detach it', { reason: 'suspended' }));

    const patch = await t.http.patch('/v1/volumes/vol_trmfree1').set(rw).send({ labels: { kept: 'yes' } });
    expect(patch.status).toBe(200);
    expect(patch.body).toMatchObject({ status: 'suspended', labels: { kept: 'yes' } });

    const list = await t.http.get('/v1/volumes?status=suspended').set(rw);
    expect(list.status).toBe(200);
    expect(list.body.volumes.map((v: { id: string }) => v.id).sort()).toEqual(['vol_trmdata1', 'vol_trmfree1']);
    const all = await t.http.get('/v1/volumes').set(rw);
    expect(all.body.volumes.map((v: { id: string }) => v.id).sort()).toEqual(['vol_ntca', 'vol_ntcb', 'vol_trmdata1', 'vol_trmfree1', 'vol_trmkeep1', 'vol_trmlater1']);
  });

  it('a renewed suspended volume is available again (not reattached; result previous_server_id), charged once, volume.resumed', async () => {
    const now = clock.now().toISOString();
    const res = await t.http.post('/v1/volumes/vol_trmdata1/renew').set(rw).send({ term_months: 1 });
    expect(res.status).toBe(202);
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1 });
    const op = (await t.http.get(`/v1/operations/${res.body.operation.id}`).set(rw)).body;
    expect(op).toMatchObject({ status: 'succeeded', result: { volume_id: 'vol_trmdata1', term_months: 1, expires_at: '2026-12-23T11:00:00.000Z', previous_server_id: 'vm_trmweb1' } });
    expect(await volume('vol_trmdata1')).toMatchObject({
      status: 'available', server: null, suspended_at: null, release_at: null, previous_server_id: 'vm_trmweb1', expires_at: '2026-12-23T11:00:00.000Z',
    });
    const ledger = await t.sql('SELECT kind, amount::text AS amount FROM wallet_ledger WHERE operation_id = $1 ORDER BY seq', [op.id]);
    expect(ledger).toEqual([{ kind: 'hold', amount: '200000' }, { kind: 'capture', amount: '200000' }]);
    const [resumed] = (await events('volume.resumed')).map((e) => JSON.parse(e.body));
    expect(resumed).toMatchObject({ type: 'volume.resumed', created_at: now, data: { id: 'vol_trmdata1', status: 'available' } });
    expect(await expire.execute()).toBe(0);
  });

  it('at the server\'s expires_at: suspended at once, vm.suspend powers it off at the provider (power_before running); its disks stay', async () => {
    const now = serverExpiresAt;
    clock.set(new Date(now));
    // The seeded later volume expired long before, and app-2 with app-1: suspended in the same sweep;
    // vol_trmfree1, suspended a month ago, is past its release_at: released.
    const [c, d] = await Promise.all([expire.execute(), expire.execute()]);
    expect(c + d).toBe(4);
    expect(await volume('vol_trmfree1')).toMatchObject({ status: 'deleting', suspended_at: at(NOW, 3600) });
    expect(await server()).toMatchObject({ status: 'suspended', suspended_at: now, release_at: at(now, 60), ipv4: expect.any(String) });
    const [op] = await operationsOf('vm_id', serverId, 'vm.suspend');
    // vm.suspend twice and vol_trmfree1's volume.delete (vol_trmlater1, available, ended its volume.suspend in the sweep).
    expect(await advance.runUntilIdle()).toMatchObject({ claimed: 3, succeeded: 3 });
    expect(await volume('vol_trmfree1')).toMatchObject({ status: 'deleted', deleted_reason: 'expired', deleted_at: now, suspended_at: null, release_at: null });
    const done = (await t.http.get(`/v1/operations/${op.id}`).set(rw)).body;
    expect(done).toEqual({
      id: op.id,
      type: 'vm.suspend',
      status: 'succeeded',
      vm_id: serverId,
      steps: [{ name: 'powering_off', status: 'succeeded' }],
      result: { server_id: serverId, suspended_at: now, release_at: at(now, 60), power_before: 'running' },
      error: null,
      created_at: now,
      finished_at: now,
    });
    const power = await t.sql('SELECT power FROM provider_instances WHERE server_id = $1 AND deleted_at IS NULL', [serverId]);
    expect(power).toEqual([{ power: 'stopped' }]);
    expect((await audits('server.suspend')).find((a) => a.target_id === serverId)).toEqual(
      { actor_type: 'system', actor_id: null, target_id: serverId, data: { operation_id: op.id, suspended_at: now, release_at: at(now, 60) } },
    );
    const [stopped] = await operationsOf('vm_id', protectedId, 'vm.suspend');
    expect((await t.http.get(`/v1/operations/${stopped.id}`).set(rw)).body.result).toMatchObject({ power_before: 'stopped' });
    expect((await t.http.get(`/v1/servers/${protectedId}`).set(rw)).body).toMatchObject({ status: 'suspended', volume_ids: ['vol_trmkeep1'] });
    const event = (await events('server.suspended')).map((e) => JSON.parse(e.body)).find((e) => e.data.id === serverId);
    expect(event).toMatchObject({ type: 'server.suspended', data: { id: serverId, status: 'suspended', suspended_at: now } });
    expect(await expire.execute()).toBe(0);
  });

  it('a suspended server refuses start, stop, reboot, console and a disk\'s attach (409, details.reason suspended); GET and PATCH work', async () => {
    const refused = async (path: string, body: object, message: string) => {
      const res = await t.http.post(path).set(rw).send(body);
      expect(res.status).toBe(409);
      expect(res.body).toEqual(errorBody(res, 'invalid_state', message, { reason: 'suspended' }));
    };
    const msg = (action: string) => `Server ${serverId} is suspended (its term ended); renew it to ${action}`;
    await refused(`/v1/servers/${serverId}/start`, {}, msg('run vm.start'));
    await refused(`/v1/servers/${serverId}/stop`, {}, msg('run vm.stop'));
    await refused(`/v1/servers/${serverId}/reboot`, {}, msg('run vm.reboot'));
    await refused(`/v1/servers/${serverId}/console`, {}, msg('open a console'));
    await refused('/v1/volumes/vol_trmdata1/attach', { server_id: serverId }, msg('attach a disk to it'));
    const before = await t.sql('SELECT count(*)::int AS n FROM operations');

    const patch = await t.http.patch(`/v1/servers/${serverId}`).set(rw).send({ labels: { kept: 'yes' } });
    expect(patch.status).toBe(200);
    expect(patch.body).toMatchObject({ status: 'suspended', labels: { kept: 'yes' } });
    const list = await t.http.get('/v1/servers?status=suspended').set(rw);
    expect(list.body.servers.map((s: { id: string }) => s.id).sort()).toEqual([serverId, protectedId].sort());
    expect(await t.sql('SELECT count(*)::int AS n FROM operations')).toEqual(before);
  });

  it('a renewed suspended server: vm.renew renewing, resuming; powered on again (it ran before), running, server.resumed, charged once', async () => {
    const res = await t.http.post(`/v1/servers/${serverId}/renew`).set(rw).send({ term_months: 1 });
    expect(res.status).toBe(202);
    expect(res.body.server.status).toBe('suspended');
    expect(res.body.operation.steps).toEqual([{ name: 'renewing', status: 'running' }, { name: 'resuming', status: 'pending' }]);
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1 });
    const op = (await t.http.get(`/v1/operations/${res.body.operation.id}`).set(rw)).body;
    expect(op).toMatchObject({
      status: 'succeeded',
      steps: [{ name: 'renewing', status: 'succeeded' }, { name: 'resuming', status: 'succeeded' }],
      result: { server_id: serverId, term_months: 1, expires_at: '2027-01-23T10:00:00.000Z', charged: { currency: 'USD', amount: '4.50000' } },
    });
    expect(await server()).toMatchObject({ status: 'running', suspended_at: null, release_at: null, expires_at: '2027-01-23T10:00:00.000Z' });
    const power = await t.sql('SELECT power FROM provider_instances WHERE server_id = $1 AND deleted_at IS NULL', [serverId]);
    expect(power).toEqual([{ power: 'running' }]);
    const ledger = await t.sql('SELECT kind, amount::text AS amount FROM wallet_ledger WHERE operation_id = $1 ORDER BY seq', [op.id]);
    expect(ledger).toEqual([{ kind: 'hold', amount: '450000' }, { kind: 'capture', amount: '450000' }]);
    expect((await events('server.resumed')).map((e) => JSON.parse(e.body).data)).toMatchObject([{ id: serverId, status: 'running' }]);
  });

  it('at release_at: the suspended server goes the vm.delete path by actor system despite delete_protection, its disk detached and kept; the suspended volume is deleted at the provider; deleted_reason expired', async () => {
    const now = at(serverExpiresAt, 120);
    clock.set(new Date(now));
    // app-2 (release at +60 s) and vol_trmlater1 (+120 s), two sweeps at once.
    const [e, f] = await Promise.all([expire.execute(), expire.execute()]);
    expect(e + f).toBe(2);
    expect(await expire.execute()).toBe(0);
    expect(now).toBe(LAST);
    expect((await t.http.get(`/v1/servers/${protectedId}`).set(rw)).body).toMatchObject({ status: 'deleting', delete_protection: true });
    expect(await volume('vol_trmlater1')).toMatchObject({ status: 'deleting' });
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 2 });

    const gone = (await t.http.get(`/v1/servers/${protectedId}`).set(rw)).body;
    expect(gone).toMatchObject({ status: 'deleted', deleted_reason: 'expired', deleted_at: now, suspended_at: null, release_at: null, volume_ids: [] });
    expect(await volume('vol_trmkeep1')).toMatchObject({ status: 'available', server: null, expires_at: '2027-06-01T00:00:00.000Z', deleted_reason: null });
    const [del] = await operationsOf('vm_id', protectedId, 'vm.delete');
    expect((await t.http.get(`/v1/operations/${del.id}`).set(rw)).body).toMatchObject({
      status: 'succeeded', steps: [{ name: 'detaching_volumes', status: 'succeeded' }, { name: 'deleting_instance', status: 'succeeded' }],
      result: { server_id: protectedId, detached_volume_ids: ['vol_trmkeep1'], deleted_at: now },
    });
    expect((await audits('server.delete')).map((a) => [a.actor_type, a.target_id, a.data])).toEqual([
      ['system', protectedId, { operation_id: del.id, volume_ids: ['vol_trmkeep1'], reason: 'expired' }],
    ]);
    for (const id of ['vol_trmlater1', 'vol_trmfree1']) {
      expect(await volume(id)).toMatchObject({ status: 'deleted', deleted_reason: 'expired', suspended_at: null });
      expect(await t.sql('SELECT deleted_at IS NOT NULL AS gone FROM provider_disks WHERE volume_id = $1', [id])).toEqual([{ gone: true }]);
    }
    const deletedEvents = (await events('volume.deleted')).map((e) => JSON.parse(e.body).data);
    expect(deletedEvents.map((d: { id: string; deleted_reason: string }) => [d.id, d.deleted_reason]).sort()).toEqual([['vol_trmfree1', 'expired'], ['vol_trmlater1', 'expired']]);
    const [serverDeleted] = (await events('server.deleted')).map((e) => JSON.parse(e.body).data);
    expect(serverDeleted).toMatchObject({ id: protectedId, deleted_reason: 'expired' });
    expect((await audits('volume.delete')).filter((a) => a.actor_type === 'system').map((a) => [a.target_id, a.data.reason]).sort()).toEqual([
      ['vol_trmfree1', 'expired'], ['vol_trmlater1', 'expired'],
    ]);
  });

  it('notices: volume.expiring / server.expiring once per (resource, expires_at, offset) crossed, with days_left rounded up; not audited', async () => {
    const notices = t.app.get(SendExpiryNotices);
    const expiring = async (type: string, ids: string[]) =>
      (await t.sql<{ body: string }>('SELECT body FROM webhook_events WHERE type = $1 ORDER BY created_at, id', [type])).map((e) => JSON.parse(e.body)).filter((e) => ids.includes(e.data.id));
    const auditsBefore = await t.sql('SELECT count(*)::int AS n FROM audit_log');
    const off = { enabled: false, term_months: null, last_attempt: null, next_attempt_at: null };

    // In 2 days: the 7- and 3-day offsets are crossed (its term began a month before), the 1-day one not yet.
    clock.set(new Date(LAST));
    const [g, h] = await Promise.all([notices.execute(), notices.execute()]);
    // Each notice sent once between the two sweeps and the next one: vol_ntcb's 7- and 3-day offsets, and the renewed
    // vol_trmdata1's three. Two concurrent sweeps may each skip a row the other holds for another offset (SKIP LOCKED):
    // that notice waits for the next sweep, never goes twice.
    const k = await notices.execute();
    expect(g + h + k).toBe(5);
    expect(await t.sql('SELECT resource_id, offset_s FROM expiry_notices ORDER BY resource_id, offset_s')).toEqual([
      { resource_id: 'vol_ntcb', offset_s: 259_200 }, { resource_id: 'vol_ntcb', offset_s: 604_800 },
      { resource_id: 'vol_trmdata1', offset_s: 86_400 }, { resource_id: 'vol_trmdata1', offset_s: 259_200 }, { resource_id: 'vol_trmdata1', offset_s: 604_800 },
    ]);
    expect(await notices.execute()).toBe(0);
    const first = await expiring('volume.expiring', ['vol_ntca', 'vol_ntcb']);
    expect(first.map((e) => e.data)).toEqual([
      { id: 'vol_ntcb', name: 'in-2-days', expires_at: at(LAST, 2 * 86_400), days_left: 2, auto_renew: off },
      { id: 'vol_ntcb', name: 'in-2-days', expires_at: at(LAST, 2 * 86_400), days_left: 2, auto_renew: off },
    ]);
    expect(first[0].created_at).toBe(LAST);

    // 3 days and a second later: vol_ntca crossed its 7-day offset; vol_ntcb has expired (no notice after expires_at).
    clock.set(new Date(at(LAST, 3 * 86_400 + 1)));
    await notices.execute();
    expect(await notices.execute()).toBe(0);
    expect((await expiring('volume.expiring', ['vol_ntca', 'vol_ntcb'])).slice(2).map((e) => e.data)).toEqual([
      { id: 'vol_ntca', name: 'in-10-days', expires_at: at(LAST, 10 * 86_400), days_left: 7, auto_renew: off },
    ]);
    expect(await t.sql('SELECT offset_s FROM expiry_notices WHERE resource_id = $1 ORDER BY offset_s', ['vol_ntcb'])).toEqual([{ offset_s: 259_200 }, { offset_s: 604_800 }]);

    // The renewed server (expires 2027-01-23T10:00): its 7-day notice.
    clock.set(new Date('2027-01-16T10:00:01.000Z'));
    await notices.execute();
    expect((await expiring('server.expiring', [serverId])).map((e) => e.data)).toEqual([
      { id: serverId, name: 'app-1', expires_at: '2027-01-23T10:00:00.000Z', days_left: 7, auto_renew: off },
    ]);
    expect(await t.sql('SELECT count(*)::int AS n FROM audit_log')).toEqual(auditsBefore);
  });

  it('cli verify: the terms checks hold after this traffic; a live volume left past expires_at and a suspended one still on a server are named', async () => {
    const verify = t.app.get(VerifyInvariants);
    // Only the terms checks: the webhook deliveries stay pending here (no delivery worker), and the broken volume below is not at the provider.
    const ours = (report: { violations: { check: string; subject: string }[] }) =>
      report.violations.filter((v) => v.check.startsWith('terms.')).map((v) => [v.check, v.subject]);
    expect(ours(await verify.execute())).toEqual([]);
    await t.sql(`UPDATE volumes SET expires_at = now() - interval '1 hour' WHERE id = 'vol_trmkeep1'`);
    await t.sql(`UPDATE volumes SET status = 'attached', server_id = 'vm_trmweb1', mount_path = '/mnt/x', mounted = true WHERE id = 'vol_ntca'`);
    await t.sql(`UPDATE volumes SET status = 'suspended', suspended_at = now(), release_at = now() + interval '1 day' WHERE id = 'vol_ntca'`);
    try {
      expect(ours(await verify.execute())).toEqual([
        ['terms.deadlines_met', 'vol_trmkeep1'],
        ['terms.suspended_volume_detached', 'vol_ntca'],
      ]);
    } finally {
      await t.sql(`UPDATE volumes SET expires_at = '2027-06-01T00:00:00Z' WHERE id = 'vol_trmkeep1'`);
    }
  });
});
