import { AdvanceOperations } from '../../src/modules/operations/application/advance-operations.use-case';
import { SnapshotTerms } from '../../src/modules/snapshots/application/snapshot-terms.use-case';
import { VerifyInvariants } from '../../src/modules/verification/application/verify-invariants.use-case';
import { FixedClock } from '../../src/shared/kernel/clock/clock';
import { errorBody } from '../support/assertions';
import { apiToken, bearer, organization, region } from '../support/fixtures';
import { setProviderDown } from '../support/provider';
import { TestApp, startTestApp } from '../support/test-app';

const NOW = '2026-11-23T10:00:00.000Z';
const at = (iso: string, seconds: number) => new Date(new Date(iso).getTime() + seconds * 1000).toISOString();
const OP_ID = /^op_[A-Za-z0-9]{24}$/;
const SNAP_ID = /^snap_[A-Za-z0-9]{24}$/;
const SNAPSHOT_PRICE = { USD: '0.01000', IDR: '160' };

/**
 * Volume snapshots on one app with a fixed clock: bought for a term (hold at acceptance, capture
 * at success, exact amounts), listed, edited, renewed, deleted, kept after their disk, refused with
 * their envelopes, limited per disk and per organization in the database, given back when the
 * provider fails, suspended and released at the end of their term; restored as new disks.
 */
describe('volume snapshots', () => {
  let t: TestApp;
  let advance: AdvanceOperations;
  const clock = new FixedClock(new Date(NOW));
  const rw = bearer(apiToken('snp', 'rw'));
  const poor = bearer(apiToken('snq', 'rw'));
  const ro = bearer(apiToken('snp', 'ro'));

  beforeAll(async () => {
    t = await startTestApp({ volumeRetentionS: 120, webhookAllowPrivateUrls: true }, clock);
    const base = organization('snp');
    const detached = (id: string, name: string, size = 10) => ({ ...base.volumes[0], id, name, size_gb: size, server: undefined, mount_path: undefined });
    await t.seed({
      regions: [region('id-jkt', { snapshot_price_per_gb_month: SNAPSHOT_PRICE }), { ...region('sg-sin'), name: 'Singapore' }],
      organizations: [
        {
          ...base,
          api_keys: [...base.api_keys, { name: 'ro', scopes: ['vm:read'], token: apiToken('snp', 'ro') }, { name: 'hooks', scopes: ['webhooks:write'], token: apiToken('snp', 'hooks') }],
          volumes: [
            base.volumes[0],
            detached('vol_snpfree1', 'free-1'),
            detached('vol_snpgone1', 'gone-1'),
            { ...detached('vol_snpsin1', 'sin-1'), region: 'sg-sin', zone: 'sg-sin-a' },
          ],
        },
        organization('snq', { wallet: { USD: '0.09999' }, servers: [], volumes: [{ ...detached('vol_snqdata1', 'data-1'), id: 'vol_snqdata1' }] }),
      ],
    });
    advance = t.app.get(AdvanceOperations);
    const hook = await t.http.post('/v1/webhook-endpoints').set(bearer(apiToken('snp', 'hooks'))).send({ url: 'http://127.0.0.1:9/hook', events: ['snapshot.deleted'] });
    expect(hook.status).toBe(201);
  });
  afterAll(async () => t?.close());

  const snapshot = (id: string) => t.http.get(`/v1/snapshots/${id}`).set(rw);
  const take = (volumeId: string, body: object, auth = rw) => t.http.post(`/v1/volumes/${volumeId}/snapshots`).set(auth).send(body);
  const balances = (orgId: string) =>
    t.sql(`SELECT currency, available::text AS available, reserved::text AS reserved FROM wallet_balances WHERE org_id = $1 ORDER BY currency`, [orgId]);
  const ledger = (operationId: string) => t.sql(`SELECT kind, currency, amount::text AS amount FROM wallet_ledger WHERE operation_id = $1 ORDER BY seq`, [operationId]);
  const counts = async () => ({
    volumes: await t.sql(`SELECT volume_id, live FROM volume_snapshot_counts ORDER BY volume_id`),
    orgs: await t.sql(`SELECT org_id, live FROM org_snapshot_counts ORDER BY org_id`),
  });

  let firstId: string;
  let firstExpires: string;

  it('snapshots an attached disk: 202 {snapshot, operation}, the hold of size × price × term; the worker copies it and captures the charge once', async () => {
    const res = await take('vol_snpdata1', { name: 'before-upgrade', term_months: 1, currency: 'USD', labels: { env: 'prod' } });
    expect(res.status).toBe(202);
    const opId: string = res.body.operation.id;
    firstId = res.body.snapshot.id;
    expect(firstId).toMatch(SNAP_ID);
    expect(opId).toMatch(OP_ID);
    expect(res.headers.location).toBe(`/v1/operations/${opId}`);
    expect(res.body).toEqual({
      snapshot: {
        id: firstId, name: 'before-upgrade', status: 'creating', volume_id: 'vol_snpdata1', region: 'id-jkt', size_gb: 100, type: 'premium',
        term_months: 1, billing: { currency: 'USD', amount: '1.00000' }, price_per_gb_month: SNAPSHOT_PRICE, expires_at: '2026-12-23T10:00:00.000Z',
        auto_renew: { enabled: false, term_months: null }, labels: { env: 'prod' }, created_at: NOW,
        suspended_at: null, release_at: null, deleted_at: null, deleted_reason: null,
      },
      operation: {
        id: opId, type: 'snapshot.create', status: 'pending', vm_id: null, snapshot_id: firstId,
        steps: [{ name: 'payment_reserved', status: 'succeeded' }, { name: 'snapshotting', status: 'pending' }],
        result: null, error: null, created_at: NOW, finished_at: null,
      },
    });
    // 100 GB × 0.01000 USD × 1 month = 1.00000 USD, held.
    expect(await balances('org_snp')).toEqual([
      { currency: 'IDR', available: '1500000', reserved: '0' },
      { currency: 'USD', available: '9900000', reserved: '100000' },
    ]);

    clock.set(new Date(at(NOW, 5)));
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1, failed: 0 });
    firstExpires = '2026-12-23T10:00:05.000Z';
    const done = await t.http.get(`/v1/operations/${opId}`).set(ro);
    expect(done.body).toMatchObject({
      status: 'succeeded',
      steps: [{ name: 'payment_reserved', status: 'succeeded' }, { name: 'snapshotting', status: 'succeeded' }],
      result: { snapshot_id: firstId, size_gb: 100, expires_at: firstExpires, charged: { currency: 'USD', amount: '1.00000' } },
    });
    expect((await snapshot(firstId)).body).toMatchObject({ status: 'available', expires_at: firstExpires });
    expect(await balances('org_snp')).toEqual([
      { currency: 'IDR', available: '1500000', reserved: '0' },
      { currency: 'USD', available: '9900000', reserved: '0' },
    ]);
    expect(await ledger(opId)).toEqual([
      { kind: 'hold', currency: 'USD', amount: '100000' },
      { kind: 'capture', currency: 'USD', amount: '100000' },
    ]);
    // The provider's copy holds the disk's data.
    const [copy] = await t.sql<{ volume_id: string; size_gb: number; same: boolean }>(
      `SELECT s.volume_id, s.size_gb, s.data_marker = COALESCE(d.data_marker, d.disk_id) AS same
         FROM provider_snapshots s JOIN provider_disks d ON d.volume_id = s.volume_id WHERE s.snapshot_id = $1 AND s.deleted_at IS NULL`,
      [firstId],
    );
    expect(copy).toEqual({ volume_id: 'vol_snpdata1', size_gb: 100, same: true });
    const audit = await t.sql(`SELECT actor_type, target_type, data FROM audit_log WHERE action = 'snapshot.create' AND target_id = $1`, [firstId]);
    expect(audit).toEqual([
      {
        actor_type: 'api_key', target_type: 'snapshot',
        data: { operation_id: opId, name: 'before-upgrade', volume_id: 'vol_snpdata1', size_gb: 100, term_months: 1, currency: 'USD', amount: '1.00000' },
      },
    ]);
  });

  it('charges IDR exactly (100 GB × 160 × 3 = 48000) and lists, filters and pages snapshots', async () => {
    clock.set(new Date(at(NOW, 10)));
    const res = await take('vol_snpdata1', { name: 'quarterly', term_months: 3, currency: 'IDR' });
    expect(res.status).toBe(202);
    expect(res.body.snapshot.billing).toEqual({ currency: 'IDR', amount: '48000' });
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1 });
    expect(await balances('org_snp')).toEqual([
      { currency: 'IDR', available: '1452000', reserved: '0' },
      { currency: 'USD', available: '9900000', reserved: '0' },
    ]);
    const secondId = res.body.snapshot.id;

    const all = await t.http.get('/v1/snapshots').set(ro);
    expect(all.status).toBe(200);
    expect(all.body.snapshots.map((s: { id: string }) => s.id)).toEqual([secondId, firstId]);
    expect(all.body.next_cursor).toBeNull();
    const page1 = await t.http.get('/v1/snapshots?limit=1').set(ro);
    expect(page1.body.snapshots.map((s: { id: string }) => s.id)).toEqual([secondId]);
    const page2 = await t.http.get(`/v1/snapshots?limit=1&cursor=${encodeURIComponent(page1.body.next_cursor)}`).set(ro);
    expect(page2.body).toEqual({ snapshots: [(await snapshot(firstId)).body], next_cursor: null });
    expect((await t.http.get('/v1/snapshots?label=env=prod').set(ro)).body.snapshots.map((s: { id: string }) => s.id)).toEqual([firstId]);
    expect((await t.http.get('/v1/snapshots?volume_id=vol_snpfree1').set(ro)).body).toEqual({ snapshots: [], next_cursor: null });
    expect((await t.http.get('/v1/snapshots?region=id-jkt&status=available').set(ro)).body.snapshots).toHaveLength(2);
    const bad = await t.http.get('/v1/snapshots?status=gone').set(ro);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual(errorBody(bad, 'invalid_request', 'status must be one of creating, available, suspended, deleting, deleted', { field: 'status' }));
    // Another organization's snapshot is 404.
    const other = await t.http.get(`/v1/snapshots/${firstId}`).set(poor);
    expect(other.status).toBe(404);
    expect(other.body).toEqual(errorBody(other, 'not_found', `Snapshot ${firstId} not found`));
    // A read-only key cannot take one.
    const ro403 = await take('vol_snpdata1', { name: 'x', term_months: 1, currency: 'USD' }, ro);
    expect(ro403.status).toBe(403);
  });

  it('PATCH changes name, labels and auto_renew (audited); bad members are 400 naming them', async () => {
    const res = await t.http.patch(`/v1/snapshots/${firstId}`).set(rw).send({ name: 'kept', labels: { team: 'db' }, auto_renew: { enabled: true } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: firstId, name: 'kept', labels: { team: 'db' }, auto_renew: { enabled: true, term_months: null } });
    expect((await snapshot(firstId)).body).toEqual(res.body);
    const audit = await t.sql(`SELECT data FROM audit_log WHERE action = 'snapshot.update' AND target_id = $1`, [firstId]);
    expect(audit).toEqual([
      {
        data: {
          changes: {
            name: { old: 'before-upgrade', new: 'kept' },
            labels: { old: { env: 'prod' }, new: { team: 'db' } },
            auto_renew: { old: { enabled: false, term_months: null }, new: { enabled: true, term_months: null } },
          },
        },
      },
    ]);
    const badName = await t.http.patch(`/v1/snapshots/${firstId}`).set(rw).send({ name: '-bad' });
    expect(badName.status).toBe(400);
    expect(badName.body.error).toMatchObject({ code: 'invalid_request', details: { field: 'name' } });
    const badTerm = await t.http.patch(`/v1/snapshots/${firstId}`).set(rw).send({ auto_renew: { enabled: true, term_months: 2 } });
    expect(badTerm.status).toBe(400);
    expect(badTerm.body.error).toMatchObject({ code: 'invalid_request', details: { field: 'auto_renew.term_months' } });
    const unknownMember = await t.http.patch(`/v1/snapshots/${firstId}`).set(rw).send({ size_gb: 5 });
    expect(unknownMember.status).toBe(400);
    // Back off for the expiry test below.
    expect((await t.http.patch(`/v1/snapshots/${firstId}`).set(rw).send({ auto_renew: { enabled: false } })).status).toBe(200);
  });

  it('refuses with envelopes: 400 members, 404 volume or a region selling no snapshots, 402 with nothing left behind', async () => {
    const noTerm = await take('vol_snpfree1', { name: 'a', term_months: 2, currency: 'USD' });
    expect(noTerm.status).toBe(400);
    expect(noTerm.body).toEqual(errorBody(noTerm, 'invalid_request', 'term_months must be 1, 3 or 12', { field: 'term_months' }));
    const noCurrency = await take('vol_snpfree1', { name: 'a', term_months: 1 });
    expect(noCurrency.status).toBe(400);
    expect(noCurrency.body).toEqual(errorBody(noCurrency, 'invalid_request', 'currency is required: USD or IDR', { field: 'currency' }));
    const extra = await take('vol_snpfree1', { name: 'a', term_months: 1, currency: 'USD', size_gb: 20 });
    expect(extra.status).toBe(400);
    expect(extra.body.error).toMatchObject({ code: 'invalid_request', details: { field: 'size_gb' } });
    const unknown = await take('vol_nope', { name: 'a', term_months: 1, currency: 'USD' });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual(errorBody(unknown, 'not_found', 'Volume vol_nope not found'));
    const otherOrg = await take('vol_snqdata1', { name: 'a', term_months: 1, currency: 'USD' });
    expect(otherOrg.status).toBe(404);
    const noOffer = await take('vol_snpsin1', { name: 'a', term_months: 1, currency: 'USD' });
    expect(noOffer.status).toBe(404);
    expect(noOffer.body).toEqual(errorBody(noOffer, 'not_found', 'Region sg-sin sells no snapshots'));

    // 10 GB × 0.01 USD = 0.10000 USD; the wallet has 0.09999.
    const short = await take('vol_snqdata1', { name: 'a', term_months: 1, currency: 'USD' }, poor);
    expect(short.status).toBe(402);
    expect(short.body).toEqual(
      errorBody(short, 'insufficient_balance', 'The wallet cannot cover 0.10000 USD; available: 0.09999 USD', { required: '0.10000', available: '0.09999', currency: 'USD' }),
    );
    expect(await t.sql(`SELECT id FROM snapshots WHERE org_id = 'org_snq'`)).toEqual([]);
    expect(await t.sql(`SELECT id FROM operations WHERE org_id = 'org_snq'`)).toEqual([]);
    expect(await t.sql(`SELECT live FROM org_snapshot_counts WHERE org_id = 'org_snq'`)).toEqual([]);
    expect(await balances('org_snq')).toEqual([{ currency: 'USD', available: '9999', reserved: '0' }]);
  });

  it('refuses a disk neither available nor attached (409 invalid_state; suspended: details.reason), a key replayed with another body (409 idempotency_conflict) and a provider that is down (503); nothing left behind', async () => {
    const before = { snapshots: await t.sql(`SELECT id FROM snapshots ORDER BY id`), balances: await balances('org_snp'), counts: await counts() };
    await t.sql(`UPDATE volumes SET status = 'deleting' WHERE id = 'vol_snpfree1'`);
    const deleting = await take('vol_snpfree1', { name: 'a', term_months: 1, currency: 'USD' });
    expect(deleting.status).toBe(409);
    expect(deleting.body).toEqual(errorBody(deleting, 'invalid_state', 'Volume vol_snpfree1 is deleting; a snapshot needs an available or attached disk'));
    await t.sql(`UPDATE volumes SET status = 'suspended', suspended_at = $1, release_at = $2 WHERE id = 'vol_snpfree1'`, [NOW, at(NOW, 86_400)]);
    const suspended = await take('vol_snpfree1', { name: 'a', term_months: 1, currency: 'USD' });
    expect(suspended.status).toBe(409);
    expect(suspended.body).toEqual(errorBody(suspended, 'invalid_state', 'Volume vol_snpfree1 is suspended (its term ended); renew it to snapshot it', { reason: 'suspended' }));
    await t.sql(`UPDATE volumes SET status = 'available', suspended_at = NULL, release_at = NULL WHERE id = 'vol_snpfree1'`);

    // A key whose first answer (402) was stored, sent again with another body.
    const key = { 'Idempotency-Key': 'snap-conflict-1' };
    const first = await take('vol_snqdata1', { name: 'a', term_months: 1, currency: 'USD' }, { ...poor, ...key });
    expect(first.status).toBe(402);
    const replay = await take('vol_snqdata1', { name: 'a', term_months: 1, currency: 'USD' }, { ...poor, ...key });
    expect(replay.status).toBe(402);
    expect(replay.body).toEqual(first.body);
    const conflict = await take('vol_snqdata1', { name: 'b', term_months: 1, currency: 'USD' }, { ...poor, ...key });
    expect(conflict.status).toBe(409);
    expect(conflict.body.error).toMatchObject({ code: 'idempotency_conflict' });

    await setProviderDown(t, true);
    try {
      const down = await take('vol_snpfree1', { name: 'a', term_months: 1, currency: 'USD' });
      expect(down.status).toBe(503);
      expect(down.body).toEqual(errorBody(down, 'provider_unavailable', 'The storage provider is unavailable; nothing was reserved. Retry later'));
    } finally {
      await setProviderDown(t, false);
    }
    expect({ snapshots: await t.sql(`SELECT id FROM snapshots ORDER BY id`), balances: await balances('org_snp'), counts: await counts() }).toEqual(before);
    expect(await t.sql(`SELECT id FROM snapshots WHERE org_id = 'org_snq'`)).toEqual([]);
    expect(await t.sql(`SELECT id FROM operations WHERE org_id = 'org_snq'`)).toEqual([]);
  });

  it('a provider failure gives the money back: the disk gone at the provider fails snapshot.create, the snapshot deleted (purchase_failed)', async () => {
    await t.sql(`UPDATE provider_disks SET deleted_at = now() WHERE volume_id = 'vol_snpgone1'`);
    const res = await take('vol_snpgone1', { name: 'lost', term_months: 1, currency: 'USD' });
    expect(res.status).toBe(202);
    expect(await balances('org_snp')).toContainEqual({ currency: 'USD', available: '9890000', reserved: '10000' });
    expect(await advance.runUntilIdle()).toMatchObject({ failed: 1 });
    const op = await t.http.get(`/v1/operations/${res.body.operation.id}`).set(rw);
    expect(op.body).toMatchObject({
      status: 'failed',
      steps: [{ name: 'payment_reserved', status: 'succeeded' }, { name: 'snapshotting', status: 'failed' }],
      error: { code: 'invalid_state', message: 'The storage provider has no disk for volume vol_snpgone1' },
    });
    expect((await snapshot(res.body.snapshot.id)).body).toMatchObject({ status: 'deleted', deleted_reason: 'purchase_failed', deleted_at: expect.any(String) });
    expect(await balances('org_snp')).toContainEqual({ currency: 'USD', available: '9900000', reserved: '0' });
    expect(await ledger(res.body.operation.id)).toEqual([
      { kind: 'hold', currency: 'USD', amount: '10000' },
      { kind: 'release', currency: 'USD', amount: '10000' },
    ]);
    expect((await counts()).volumes).toContainEqual({ volume_id: 'vol_snpgone1', live: 0 });
    // The disk back at the provider (the test's own outage over).
    await t.sql(`UPDATE provider_disks SET deleted_at = NULL WHERE volume_id = 'vol_snpgone1'`);
  });

  it('at most 10 live snapshots per disk and 100 per organization: 409 quota_exceeded with details.limit, counted in the database', async () => {
    for (let i = 0; i < 10; i++) {
      const res = await take('vol_snpfree1', { name: `n-${i}`, term_months: 1, currency: 'USD' });
      expect(res.status).toBe(202);
    }
    const eleventh = await take('vol_snpfree1', { name: 'n-10', term_months: 1, currency: 'USD' });
    expect(eleventh.status).toBe(409);
    expect(eleventh.body).toEqual(errorBody(eleventh, 'quota_exceeded', 'This disk has 10 snapshots already (the limit); delete one first', { limit: 10 }));
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 10 });
    // 10 × 10 GB × 0.01 = 1.00000 USD more.
    expect(await balances('org_snp')).toContainEqual({ currency: 'USD', available: '9800000', reserved: '0' });
    expect(await counts()).toEqual({
      volumes: [
        { volume_id: 'vol_snpdata1', live: 2 },
        { volume_id: 'vol_snpfree1', live: 10 },
        { volume_id: 'vol_snpgone1', live: 0 },
      ],
      orgs: [{ org_id: 'org_snp', live: 12 }],
    });
    // The organization's limit: its counter at 100 (as if 88 more were live elsewhere).
    await t.sql(`UPDATE org_snapshot_counts SET live = 100 WHERE org_id = 'org_snp'`);
    const full = await take('vol_snpdata1', { name: 'one-more', term_months: 1, currency: 'USD' });
    expect(full.status).toBe(409);
    expect(full.body).toEqual(errorBody(full, 'quota_exceeded', 'The organization has 100 snapshots already (the limit); delete one first', { limit: 100 }));
    await t.sql(`UPDATE org_snapshot_counts SET live = 12 WHERE org_id = 'org_snp'`);
  });

  it('12 creates racing for one disk (on PostgreSQL, 12 connections): exactly 10 accepted, 2 quota_exceeded, each accepted one held once', async () => {
    const replies = await Promise.all(Array.from({ length: 12 }, (_, i) => take('vol_snpgone1', { name: `race-${i}`, term_months: 1, currency: 'USD' })));
    expect(replies.map((r) => r.status).sort()).toEqual([...Array(10).fill(202), 409, 409]);
    for (const r of replies.filter((x) => x.status === 409)) expect(r.body.error).toMatchObject({ code: 'quota_exceeded', details: { limit: 10 } });
    expect(await t.sql(`SELECT count(*)::int AS n FROM snapshots WHERE volume_id = 'vol_snpgone1' AND status <> 'deleted'`)).toEqual([{ n: 10 }]);
    expect(await t.sql(`SELECT count(*)::int AS n FROM wallet_ledger l JOIN operations o ON o.id = l.operation_id
                         WHERE o.type = 'snapshot.create' AND o.params->>'volume_id' = 'vol_snpgone1' AND l.kind = 'hold'`)).toEqual([{ n: 11 }]);
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 10, failed: 0 });
    // 10 × 10 GB × 0.01 USD = 1.00000 USD more; then they are deleted, the disk's slots free again.
    expect(await balances('org_snp')).toContainEqual({ currency: 'USD', available: '9700000', reserved: '0' });
    for (const r of replies.filter((x) => x.status === 202)) expect((await t.http.delete(`/v1/snapshots/${r.body.snapshot.id}`).set(rw)).status).toBe(202);
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 10 });
    expect((await counts()).volumes).toContainEqual({ volume_id: 'vol_snpgone1', live: 0 });
  });

  it('renews at the frozen price (100 GB × 0.01 × 3 = 3.00000 USD): expires_at + 3 months, charged once', async () => {
    const res = await t.http.post(`/v1/snapshots/${firstId}/renew`).set(rw).send({ term_months: 3 });
    expect(res.status).toBe(202);
    expect(res.body.operation).toMatchObject({ type: 'snapshot.renew', snapshot_id: firstId, steps: [{ name: 'renewing', status: 'running' }] });
    const busy = await t.http.delete(`/v1/snapshots/${firstId}`).set(rw);
    expect(busy.status).toBe(409);
    expect(busy.body).toEqual(errorBody(busy, 'invalid_state', `Snapshot ${firstId} has an unfinished operation ${res.body.operation.id}; wait for it to end`, { operation_id: res.body.operation.id }));
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1 });
    const done = (await t.http.get(`/v1/operations/${res.body.operation.id}`).set(rw)).body;
    expect(done.result).toEqual({ snapshot_id: firstId, term_months: 3, expires_at: '2027-03-23T10:00:05.000Z', charged: { currency: 'USD', amount: '3.00000' } });
    expect((await snapshot(firstId)).body).toMatchObject({ status: 'available', term_months: 3, billing: { currency: 'USD', amount: '3.00000' }, expires_at: '2027-03-23T10:00:05.000Z' });
    expect(await ledger(res.body.operation.id)).toEqual([
      { kind: 'hold', currency: 'USD', amount: '300000' },
      { kind: 'capture', currency: 'USD', amount: '300000' },
    ]);
    firstExpires = '2027-03-23T10:00:05.000Z';
  });

  it('restores a snapshot as a larger disk holding the same data (volume.create: payment_reserved, restoring, ready), charged as any disk', async () => {
    const res = await t.http.post('/v1/volumes').set(rw).send({ name: 'restored-1', region: 'id-jkt', snapshot_id: firstId, size_gb: 200, term_months: 1, currency: 'USD' });
    expect(res.status).toBe(202);
    expect(res.body.volume).toMatchObject({ name: 'restored-1', status: 'creating', type: 'premium', size_gb: 200, billing: { currency: 'USD', amount: '4.00000' } });
    expect(res.body.operation.steps).toEqual([
      { name: 'payment_reserved', status: 'succeeded' },
      { name: 'restoring', status: 'pending' },
      { name: 'ready', status: 'pending' },
    ]);
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1, failed: 0 });
    const volumeId = res.body.volume.id as string;
    expect((await t.http.get(`/v1/volumes/${volumeId}`).set(rw)).body).toMatchObject({ status: 'available', size_gb: 200 });
    // 200 GB × 0.02000 USD × 1 month, captured once.
    expect(await ledger(res.body.operation.id)).toEqual([
      { kind: 'hold', currency: 'USD', amount: '400000' },
      { kind: 'capture', currency: 'USD', amount: '400000' },
    ]);
    const marker = async (id: string) =>
      (await t.sql<{ m: string }>(`SELECT COALESCE(data_marker, disk_id) AS m FROM provider_disks WHERE volume_id = $1 AND deleted_at IS NULL`, [id]))[0]?.m;
    expect(await marker(volumeId)).toBe(await marker('vol_snpdata1'));
    expect(await t.sql(`SELECT data->>'snapshot_id' AS snapshot_id FROM audit_log WHERE action = 'volume.create' AND target_id = $1`, [volumeId])).toEqual([{ snapshot_id: firstId }]);

    // Refusals: a size below the snapshot's, another region or type, an unknown snapshot, one not available.
    const small = await t.http.post('/v1/volumes').set(rw).send({ name: 'r-2', region: 'id-jkt', snapshot_id: firstId, size_gb: 50, term_months: 1, currency: 'USD' });
    expect(small.status).toBe(400);
    expect(small.body).toEqual(errorBody(small, 'invalid_request', "size_gb must be at least the snapshot's 100 GB", { field: 'size_gb' }));
    const elsewhere = await t.http.post('/v1/volumes').set(rw).send({ name: 'r-2', region: 'sg-sin', snapshot_id: firstId, term_months: 1, currency: 'USD' });
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body.error).toMatchObject({ code: 'invalid_request', details: { field: 'region' } });
    const ssd = await t.http.post('/v1/volumes').set(rw).send({ name: 'r-2', region: 'id-jkt', type: 'ssd', snapshot_id: firstId, term_months: 1, currency: 'USD' });
    expect(ssd.status).toBe(400);
    expect(ssd.body.error).toMatchObject({ code: 'invalid_request', details: { field: 'type' } });
    const unknown = await t.http.post('/v1/volumes').set(rw).send({ name: 'r-2', region: 'id-jkt', snapshot_id: 'snap_nope', term_months: 1, currency: 'USD' });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual(errorBody(unknown, 'not_found', 'Snapshot snap_nope not found'));
    const noSize = await t.http.post('/v1/volumes').set(rw).send({ name: 'r-2', region: 'id-jkt', term_months: 1, currency: 'USD' });
    expect(noSize.status).toBe(400);
    expect(noSize.body).toEqual(errorBody(noSize, 'invalid_request', 'size_gb is required', { field: 'size_gb' }));
    expect(await t.sql(`SELECT id FROM volumes WHERE name = 'r-2'`)).toEqual([]);
    // Done with it: deleted, so the disks below are the test's.
    expect((await t.http.delete(`/v1/volumes/${volumeId}`).set(rw)).status).toBe(202);
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1 });
  });

  it('outlives its disk; DELETE makes it deleting, snapshot.delete deletes it at the provider; a deleted one refuses DELETE and PATCH', async () => {
    const del = await t.http.delete('/v1/volumes/vol_snpdata1?detach=true').set(rw);
    expect(del.status).toBe(202);
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1 });
    expect((await t.http.get('/v1/volumes/vol_snpdata1').set(rw)).body.status).toBe('deleted');
    const kept = await t.http.get('/v1/snapshots?volume_id=vol_snpdata1').set(rw);
    expect(kept.body.snapshots.map((s: { status: string }) => s.status)).toEqual(['available', 'available']);

    // The disk gone, its snapshot still restores (size: the snapshot's by default).
    const restoredAgain = await t.http.post('/v1/volumes').set(rw).send({ name: 'restored-2', region: 'id-jkt', snapshot_id: firstId, term_months: 1, currency: 'USD' });
    expect(restoredAgain.status).toBe(202);
    expect(restoredAgain.body.volume).toMatchObject({ size_gb: 100, billing: { currency: 'USD', amount: '2.00000' } });
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1 });
    const [restored] = await t.sql<{ same: boolean }>(
      `SELECT d.data_marker = s.data_marker AS same FROM provider_disks d, provider_snapshots s WHERE d.volume_id = $1 AND s.snapshot_id = $2`,
      [restoredAgain.body.volume.id, firstId],
    );
    expect(restored).toEqual({ same: true });
    expect((await t.http.delete(`/v1/volumes/${restoredAgain.body.volume.id}`).set(rw)).status).toBe(202);
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1 });

    const second = kept.body.snapshots[0].id as string;
    const res = await t.http.delete(`/v1/snapshots/${second}`).set(rw);
    expect(res.status).toBe(202);
    expect(res.body.snapshot).toMatchObject({ id: second, status: 'deleting' });
    expect(res.body.operation).toMatchObject({ type: 'snapshot.delete', snapshot_id: second, steps: [{ name: 'deleting', status: 'pending' }] });
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1 });
    expect((await snapshot(second)).body).toMatchObject({ status: 'deleted', deleted_reason: 'customer', deleted_at: expect.any(String) });
    expect(await t.sql(`SELECT deleted_at IS NOT NULL AS gone FROM provider_snapshots WHERE snapshot_id = $1`, [second])).toEqual([{ gone: true }]);
    const again = await t.http.delete(`/v1/snapshots/${second}`).set(rw);
    expect(again.status).toBe(409);
    expect(again.body).toEqual(errorBody(again, 'invalid_state', `Snapshot ${second} is deleted already`));
    const patch = await t.http.patch(`/v1/snapshots/${second}`).set(rw).send({ name: 'x' });
    expect(patch.status).toBe(409);
    expect((await t.http.get('/v1/snapshots?status=deleted').set(rw)).body.snapshots.map((s: { id: string }) => s.id)).toContain(second);
    expect(await t.sql(`SELECT action, actor_type FROM audit_log WHERE target_id = $1 ORDER BY seq`, [second])).toEqual([
      { action: 'snapshot.create', actor_type: 'api_key' },
      { action: 'snapshot.delete', actor_type: 'api_key' },
    ]);
    // A disk deleted: no new snapshot of it.
    const ofDeleted = await take('vol_snpdata1', { name: 'late', term_months: 1, currency: 'USD' });
    expect(ofDeleted.status).toBe(404);
  });

  it('at the end of its term it is suspended, then released (deleted, reason expired); with auto_renew on it is renewed instead', async () => {
    const terms = t.app.get(SnapshotTerms);
    const [auto] = (await t.http.get('/v1/snapshots?volume_id=vol_snpfree1&limit=1').set(rw)).body.snapshots;
    expect((await t.http.patch(`/v1/snapshots/${auto.id}`).set(rw).send({ auto_renew: { enabled: true } })).status).toBe(200);
    clock.set(new Date(firstExpires));
    // Every snapshot of free-1 expired long before: 9 suspended, 1 renewed; the first one now.
    expect(await terms.execute()).toBe(11);
    expect(await terms.execute()).toBe(0);
    const first = (await snapshot(firstId)).body;
    expect(first).toMatchObject({ status: 'suspended', suspended_at: firstExpires, release_at: at(firstExpires, 120) });
    expect(await t.sql(`SELECT actor_type, data FROM audit_log WHERE action = 'snapshot.suspend' AND target_id = $1`, [firstId])).toEqual([
      { actor_type: 'system', data: { suspended_at: firstExpires, release_at: at(firstExpires, 120) } },
    ]);
    const refused = await t.http.post('/v1/volumes').set(rw).send({ name: 'r-3', region: 'id-jkt', snapshot_id: firstId, term_months: 1, currency: 'USD' });
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual(errorBody(refused, 'invalid_state', `Snapshot ${firstId} is suspended (its term ended); renew it to restore from it`, { reason: 'suspended' }));
    const renewal = await t.sql<{ id: string; type: string }>(`SELECT id, type FROM operations WHERE params->>'snapshot_id' = $1 AND type = 'snapshot.renew'`, [auto.id]);
    expect(renewal).toHaveLength(1);
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1 });
    expect((await snapshot(auto.id)).body).toMatchObject({ status: 'available', suspended_at: null });

    clock.set(new Date(at(firstExpires, 120)));
    expect(await terms.execute()).toBe(10);
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 10 });
    expect((await snapshot(firstId)).body).toMatchObject({ status: 'deleted', deleted_reason: 'expired', suspended_at: null, release_at: null });
    expect(await t.sql(`SELECT actor_type, data->>'reason' AS reason FROM audit_log WHERE action = 'snapshot.delete' AND target_id = $1`, [firstId])).toEqual([
      { actor_type: 'system', reason: 'expired' },
    ]);
    expect(await counts()).toMatchObject({ orgs: [{ org_id: 'org_snp', live: 1 }] });
    // snapshot.deleted: the Snapshot as its GET shows it, deleted_reason saying why (1 failed purchase, 11 deleted by the customer, 10 released).
    const events = await t.sql<{ body: string }>(`SELECT body FROM webhook_events WHERE type = 'snapshot.deleted' ORDER BY created_at, id`);
    const reasons = events.map((e) => (JSON.parse(e.body) as { data: { deleted_reason: string } }).data.deleted_reason);
    expect(reasons.filter((r) => r === 'purchase_failed')).toHaveLength(1);
    expect(reasons.filter((r) => r === 'customer')).toHaveLength(11);
    expect(reasons.filter((r) => r === 'expired')).toHaveLength(10);
    const released = events.map((e) => JSON.parse(e.body) as { data: { id: string } }).find((e) => e.data.id === firstId);
    expect(released?.data).toEqual((await snapshot(firstId)).body);
  });

  it('cli verify finds every snapshot charged once and every live one at the provider, and reports one missing there', async () => {
    // The webhook deliveries are not sent in this file (no delivery worker runs): their schedule check aside.
    const verify = { execute: async () => {
      const r = await t.app.get(VerifyInvariants).execute();
      return { ...r, violations: r.violations.filter((v) => v.check !== 'webhooks.deliveries_on_schedule') };
    } };
    const report = await verify.execute();
    expect(report.violations).toEqual([]);
    expect(report.checks.map((c) => c.name)).toEqual(expect.arrayContaining(['snapshots.charged_once', 'snapshots.counts_match', 'provider.snapshots_match']));
    const [live] = await t.sql<{ id: string }>(`SELECT id FROM snapshots WHERE status = 'available'`);
    await t.sql(`UPDATE provider_snapshots SET deleted_at = now() WHERE snapshot_id = $1`, [live.id]);
    expect((await verify.execute()).violations).toEqual([
      { check: 'provider.snapshots_match', subject: live.id, message: 'available snapshot is missing at the storage provider', details: { org_id: 'org_snp' } },
    ]);
    await t.sql(`UPDATE provider_snapshots SET deleted_at = NULL WHERE snapshot_id = $1`, [live.id]);
    // Left available past its expires_at (the term sweep missed it): named by terms.deadlines_met.
    const [{ expires_at: liveExpires }] = await t.sql<{ expires_at: Date }>(`SELECT expires_at FROM snapshots WHERE id = $1`, [live.id]);
    await t.sql(`UPDATE snapshots SET expires_at = '2026-01-01T00:00:00Z' WHERE id = $1`, [live.id]);
    expect((await verify.execute()).violations).toEqual([
      {
        check: 'terms.deadlines_met', subject: live.id, message: 'available past its expires_at (2026-01-01T00:00:00.000Z) by more than 65 s',
        details: { org_id: 'org_snp', status: 'available', expires_at: '2026-01-01T00:00:00.000Z' },
      },
    ]);
    await t.sql(`UPDATE snapshots SET expires_at = $2 WHERE id = $1`, [live.id, liveExpires]);
    expect((await verify.execute()).violations).toEqual([]);
    // A counter off by one, and a snapshot that was never bought (no snapshot.create, nothing at the provider).
    await t.sql(`UPDATE volume_snapshot_counts SET live = live + 1 WHERE volume_id = 'vol_snpfree1'`);
    await t.sql(
      `INSERT INTO snapshots (id, org_id, name, status, volume_id, region_id, zone_id, type, size_gb, term_months, billing_currency, billing_amount,
                              price_usd_minor, price_idr_minor, expires_at, created_at)
       VALUES ('snap_free000000000000000000', 'org_snp', 'free', 'available', 'vol_snpfree1', 'id-jkt', 'id-jkt-a', 'premium', 10, 1, 'USD', 0, 1000, 160, now(), now())`,
    );
    expect((await verify.execute()).violations).toEqual([
      { check: 'snapshots.charged_once', subject: 'snap_free000000000000000000', message: expect.stringContaining('0 snapshot.create operation(s)'), details: expect.any(Object) },
      { check: 'snapshots.counts_match', subject: 'vol_snpfree1', message: '2 live snapshot(s), counter 3', details: { scope: 'vol_snpfree1', counted: 3, live: 2 } },
      { check: 'provider.snapshots_match', subject: 'snap_free000000000000000000', message: 'available snapshot is missing at the storage provider', details: { org_id: 'org_snp' } },
    ]);
  });
});
