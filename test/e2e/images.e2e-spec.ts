import { AdvanceOperations } from '../../src/modules/operations/application/advance-operations.use-case';
import { ImageTerms } from '../../src/modules/images/application/image-terms.use-case';
import { VerifyInvariants } from '../../src/modules/verification/application/verify-invariants.use-case';
import { FixedClock } from '../../src/shared/kernel/clock/clock';
import { errorBody } from '../support/assertions';
import { apiToken, bearer, organization } from '../support/fixtures';
import { IMAGES, SERVER_PLANS, serverRegion } from '../support/servers';
import { setComputeProviderDown } from '../support/provider';
import { TestApp, startTestApp } from '../support/test-app';

const NOW = '2026-11-23T10:00:00.000Z';
const at = (iso: string, seconds: number) => new Date(new Date(iso).getTime() + seconds * 1000).toISOString();
const OP_ID = /^op_[A-Za-z0-9]{24}$/;
const IMG_ID = /^img_[A-Za-z0-9]{24}$/;
const SNAPSHOT_PRICE = { USD: '0.01000', IDR: '160' };

/**
 * Server images on one app with a fixed clock: a server's boot disk imaged for a term (hold at
 * acceptance, capture at success, exact amounts), listed beside the catalog's images, servers
 * bought and rebuilt from it (the provider's instance installed from it), refused with their
 * envelopes, limited per organization in the database, deleted, suspended and released at the
 * end of their term, checked by cli verify.
 */
describe('server images', () => {
  let t: TestApp;
  let advance: AdvanceOperations;
  const clock = new FixedClock(new Date(NOW));
  const rw = bearer(apiToken('imo', 'rw'));
  const other = bearer(apiToken('imq', 'rw'));
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    t = await startTestApp({ volumeRetentionS: 120, webhookAllowPrivateUrls: true }, clock);
    await t.seed({
      server_plans: SERVER_PLANS,
      images: IMAGES,
      regions: [
        serverRegion('id-jkt', 256, { snapshot_price_per_gb_month: SNAPSHOT_PRICE }),
        serverRegion('sg-sin', 256, { name: 'Singapore', snapshot_price_per_gb_month: SNAPSHOT_PRICE }),
      ],
      organizations: [
        { ...organization('imo'), servers: [], volumes: [], api_keys: [...organization('imo').api_keys, { name: 'hooks', scopes: ['webhooks:write'], token: apiToken('imo', 'hooks') }] },
        organization('imq', { servers: [], volumes: [] }),
      ],
    });
    advance = t.app.get(AdvanceOperations);
    const hook = await t.http.post('/v1/webhook-endpoints').set(bearer(apiToken('imo', 'hooks'))).send({ url: 'http://127.0.0.1:9/hook', events: ['image.deleted'] });
    expect(hook.status).toBe(201);
    // The servers to image: "src" (cx2, 80 GB) and "small" (cx1, 40 GB), both from debian-12; "sin" in sg-sin.
    for (const [name, plan, region] of [['src', 'cx2', 'id-jkt'], ['small', 'cx1', 'id-jkt'], ['sin', 'cx2', 'sg-sin']]) {
      const res = await t.http.post('/v1/servers').set(rw).send({ name, region, plan, image: 'debian-12', term_months: 1, currency: 'USD' });
      expect(res.status).toBe(202);
      ids[name] = res.body.server.id;
    }
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 3, failed: 0 });
  });
  afterAll(async () => t?.close());

  const image = (id: string) => t.http.get(`/v1/images/${id}`).set(rw);
  const take = (serverId: string, body: object, auth = rw) => t.http.post(`/v1/servers/${serverId}/images`).set(auth).send(body);
  const buy = (body: object, auth = rw) => t.http.post('/v1/servers').set(auth).send({ term_months: 1, currency: 'USD', region: 'id-jkt', ...body });
  const balances = (orgId: string) =>
    t.sql(`SELECT currency, available::text AS available, reserved::text AS reserved FROM wallet_balances WHERE org_id = $1 ORDER BY currency`, [orgId]);
  const ledger = (operationId: string) => t.sql(`SELECT kind, currency, amount::text AS amount FROM wallet_ledger WHERE operation_id = $1 ORDER BY seq`, [operationId]);
  const instanceImage = async (serverId: string) =>
    (await t.sql<{ image: string }>(`SELECT image FROM provider_instances WHERE server_id = $1 AND deleted_at IS NULL`, [serverId]))[0]?.image;

  let imgId: string;
  let imgExpires: string;
  let usdAfterImage: string;

  it("images a running server: 202 {image, operation}, the hold of disk_gb × snapshot price × term; the provider copies its boot disk, the charge captured once", async () => {
    const before = (await balances('org_imo')) as { currency: string; available: string }[];
    const res = await take(ids.src, { name: 'golden', term_months: 1, currency: 'USD', labels: { role: 'web' } });
    expect(res.status).toBe(202);
    const opId: string = res.body.operation.id;
    imgId = res.body.image.id;
    expect(imgId).toMatch(IMG_ID);
    expect(opId).toMatch(OP_ID);
    expect(res.headers.location).toBe(`/v1/operations/${opId}`);
    expect(res.body).toEqual({
      image: {
        id: imgId, name: 'golden', type: 'snapshot', status: 'creating', from_server_id: ids.src, region: 'id-jkt', disk_gb: 80, os: 'debian-12',
        term_months: 1, billing: { currency: 'USD', amount: '0.80000' }, price_per_gb_month: SNAPSHOT_PRICE, expires_at: '2026-12-23T10:00:00.000Z',
        auto_renew: { enabled: false, term_months: null }, labels: { role: 'web' }, created_at: NOW,
        suspended_at: null, release_at: null, deleted_at: null, deleted_reason: null,
      },
      operation: {
        id: opId, type: 'image.create', status: 'pending', vm_id: null, image_id: imgId,
        steps: [{ name: 'payment_reserved', status: 'succeeded' }, { name: 'imaging', status: 'pending' }],
        result: null, error: null, created_at: NOW, finished_at: null,
      },
    });
    // 80 GB × 0.01000 USD × 1 month = 0.80000 USD, held.
    const usd = before.find((b) => b.currency === 'USD')!;
    usdAfterImage = (BigInt(usd.available) - 80000n).toString();
    expect(await balances('org_imo')).toContainEqual({ currency: 'USD', available: usdAfterImage, reserved: '80000' });

    clock.set(new Date(at(NOW, 5)));
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1, failed: 0 });
    imgExpires = '2026-12-23T10:00:05.000Z';
    const done = await t.http.get(`/v1/operations/${opId}`).set(rw);
    expect(done.body).toMatchObject({
      status: 'succeeded',
      image_id: imgId,
      steps: [{ name: 'payment_reserved', status: 'succeeded' }, { name: 'imaging', status: 'succeeded' }],
      result: { image_id: imgId, disk_gb: 80, expires_at: imgExpires, charged: { currency: 'USD', amount: '0.80000' } },
    });
    expect((await image(imgId)).body).toMatchObject({ status: 'available', expires_at: imgExpires });
    expect(await balances('org_imo')).toContainEqual({ currency: 'USD', available: usdAfterImage, reserved: '0' });
    expect(await ledger(opId)).toEqual([
      { kind: 'hold', currency: 'USD', amount: '80000' },
      { kind: 'capture', currency: 'USD', amount: '80000' },
    ]);
    expect(await t.sql(`SELECT server_id, disk_gb, source_image, deleted_at FROM provider_images WHERE image_id = $1`, [imgId])).toEqual([
      { server_id: ids.src, disk_gb: 80, source_image: 'debian-12', deleted_at: null },
    ]);
    expect(await t.sql(`SELECT actor_type, target_type, data FROM audit_log WHERE action = 'image.create' AND target_id = $1`, [imgId])).toEqual([
      {
        actor_type: 'api_key', target_type: 'image',
        data: { operation_id: opId, name: 'golden', server_id: ids.src, disk_gb: 80, term_months: 1, currency: 'USD', amount: '0.80000' },
      },
    ]);
  });

  it("GET /v1/images lists the catalog's images and the organization's own, filtered by type and paged; another organization's image is 404", async () => {
    const all = await t.http.get('/v1/images').set(rw);
    expect(all.status).toBe(200);
    expect(all.body.next_cursor).toBeNull();
    expect(all.body.images).toHaveLength(4);
    expect(all.body.images).toEqual(expect.arrayContaining([
      { id: 'debian-12', name: 'Debian 12', type: 'system' },
      { id: 'docker-ce', name: 'Docker CE', type: 'app' },
      { id: 'ubuntu-24.04', name: 'Ubuntu 24.04', type: 'system' },
      (await image(imgId)).body,
    ]));
    expect((await t.http.get('/v1/images?type=snapshot').set(rw)).body).toEqual({ images: [(await image(imgId)).body], next_cursor: null });
    expect((await t.http.get('/v1/images?type=app').set(rw)).body).toEqual({ images: [{ id: 'docker-ce', name: 'Docker CE', type: 'app' }], next_cursor: null });
    // Pages of 3: every image once.
    const page1 = await t.http.get('/v1/images?limit=3').set(rw);
    expect(page1.body.images).toHaveLength(3);
    const page2 = await t.http.get(`/v1/images?limit=3&cursor=${encodeURIComponent(page1.body.next_cursor)}`).set(rw);
    expect(page2.body.next_cursor).toBeNull();
    expect([...page1.body.images, ...page2.body.images].map((i: { id: string }) => i.id).sort()).toEqual(all.body.images.map((i: { id: string }) => i.id).sort());
    const bad = await t.http.get('/v1/images?type=iso').set(rw);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual(errorBody(bad, 'invalid_request', 'type must be one of system, app, snapshot', { field: 'type' }));
    // Another organization sees the catalog only, and not this image.
    expect((await t.http.get('/v1/images?type=snapshot').set(other)).body).toEqual({ images: [], next_cursor: null });
    const hidden = await t.http.get(`/v1/images/${imgId}`).set(other);
    expect(hidden.status).toBe(404);
    expect(hidden.body).toEqual(errorBody(hidden, 'not_found', `Image ${imgId} not found`));
    const patch = await t.http.patch(`/v1/images/${imgId}`).set(other).send({ name: 'mine' });
    expect(patch.status).toBe(404);
  });

  it("GET /v1/images/{id} with a catalog id answers the object the list shows for it, to every organization; an unknown id and another organization's image are 404", async () => {
    const listed = (await t.http.get('/v1/images?limit=100').set(rw)).body.images as { id: string; type: string }[];
    const catalog = listed.filter((i) => i.type !== 'snapshot');
    expect(catalog.map((i) => i.id).sort()).toEqual(['debian-12', 'docker-ce', 'ubuntu-24.04']);
    for (const entry of catalog) {
      for (const auth of [rw, other]) {
        const res = await image(entry.id).set(auth);
        expect(res.status).toBe(200);
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        expect(res.body).toEqual(entry);
      }
    }
    // The organization's own image reads as the list shows it too.
    expect((await image(imgId)).body).toEqual(listed.find((i) => i.id === imgId));
    const unknown = await image('centos-7');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual(errorBody(unknown, 'not_found', 'Image centos-7 not found'));
    const hidden = await t.http.get(`/v1/images/${imgId}`).set(other);
    expect(hidden.status).toBe(404);
    expect(hidden.body).toEqual(errorBody(hidden, 'not_found', `Image ${imgId} not found`));
    // A catalog image is read-only: it is no image of the organization's to edit.
    const patch = await t.http.patch('/v1/images/debian-12').set(rw).send({ name: 'mine' });
    expect(patch.status).toBe(404);
    expect(patch.body).toEqual(errorBody(patch, 'not_found', 'Image debian-12 not found'));
  });

  it('buys two servers from it and rebuilds a third: the provider installs each from the image; the servers charged as any', async () => {
    const bought: string[] = [];
    for (const [name, plan, amount] of [['copy-1', 'cx2', '9.00000'], ['copy-2', 'cx4', '18.00000']]) {
      const res = await buy({ name, plan, image: imgId });
      expect(res.status).toBe(202);
      expect(res.body.server).toMatchObject({ name, plan, image: imgId, status: 'creating', billing: { currency: 'USD', amount } });
      bought.push(res.body.server.id);
    }
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 2, failed: 0 });
    for (const id of bought) {
      expect((await t.http.get(`/v1/servers/${id}`).set(rw)).body).toMatchObject({ status: 'running', image: imgId });
      expect(await instanceImage(id)).toBe(imgId);
    }
    const charges = await t.sql(
      `SELECT l.kind, l.amount::text AS amount FROM wallet_ledger l JOIN operations o ON o.id = l.operation_id
        WHERE o.type = 'vm.create' AND o.vm_id = ANY($1::text[]) ORDER BY l.kind DESC, l.amount`,
      [bought],
    );
    expect(charges).toEqual([
      { kind: 'hold', amount: '900000' },
      { kind: 'hold', amount: '1800000' },
      { kind: 'capture', amount: '900000' },
      { kind: 'capture', amount: '1800000' },
    ]);
    ids.copy1 = bought[0];

    // A third, bought from debian-12 (cx4), rebuilt from the image.
    const third = await buy({ name: 'third', plan: 'cx4', image: 'ubuntu-24.04' });
    expect(third.status).toBe(202);
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1 });
    ids.third = third.body.server.id;
    const rebuild = await t.http.post(`/v1/servers/${ids.third}/rebuild`).set(rw).send({ image: imgId });
    expect(rebuild.status).toBe(202);
    expect(rebuild.body.operation).toMatchObject({ type: 'vm.rebuild', vm_id: ids.third });
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1, failed: 0 });
    expect((await t.http.get(`/v1/servers/${ids.third}`).set(rw)).body).toMatchObject({ status: 'running', image: imgId });
    expect(await instanceImage(ids.third)).toBe(imgId);
    expect(await t.sql(`SELECT data->>'image' AS image, data->>'image_before' AS before FROM audit_log WHERE action = 'server.rebuild' AND target_id = $1`, [ids.third])).toEqual([
      { image: imgId, before: 'ubuntu-24.04' },
    ]);
  });

  it('refuses with envelopes: a plan smaller than the image 400 naming plan, another region 400 naming image, another organization 404; nothing left behind', async () => {
    const small = await buy({ name: 'too-small', plan: 'cx1', image: imgId });
    expect(small.status).toBe(400);
    expect(small.body).toEqual(
      errorBody(small, 'invalid_request', `plan cx1 has a 40 GB boot disk, smaller than image ${imgId}'s 80 GB; choose a plan with at least 80 GB`, { field: 'plan' }),
    );
    const elsewhere = await buy({ name: 'elsewhere', plan: 'cx2', image: imgId, region: 'sg-sin' });
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body).toEqual(
      errorBody(elsewhere, 'invalid_request', `image ${imgId} is in region id-jkt; a server in sg-sin cannot be made from it`, { field: 'image' }),
    );
    const foreign = await buy({ name: 'foreign', plan: 'cx2', image: imgId }, other);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(errorBody(foreign, 'not_found', `Image ${imgId} not found`));
    const unknown = await buy({ name: 'unknown', plan: 'cx2', image: 'img_nope' });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual(errorBody(unknown, 'not_found', 'Image img_nope not found'));
    // A rebuild of a 40 GB server from the 80 GB image.
    const rebuildSmall = await t.http.post(`/v1/servers/${ids.small}/rebuild`).set(rw).send({ image: imgId });
    expect(rebuildSmall.status).toBe(400);
    expect(rebuildSmall.body).toEqual(
      errorBody(rebuildSmall, 'invalid_request', `plan cx1 has a 40 GB boot disk, smaller than image ${imgId}'s 80 GB; choose a plan with at least 80 GB`, { field: 'plan' }),
    );
    expect(await t.sql(`SELECT name FROM servers WHERE name IN ('too-small', 'elsewhere', 'foreign', 'unknown')`)).toEqual([]);
    expect(await t.sql(`SELECT id FROM operations WHERE org_id = 'org_imq'`)).toEqual([]);
    expect(await instanceImage(ids.small)).toBe('debian-12');
    // In the database: a server naming an image that is neither the catalog's nor its organization's is refused, and an image a server names stays.
    await expect(t.sql(`UPDATE servers SET image_id = 'img_nope' WHERE id = $1`, [ids.small])).rejects.toThrow(/neither a catalog image nor an image of organization org_imo/);
    await expect(t.sql(`DELETE FROM images WHERE id = 'debian-12'`)).rejects.toThrow(/image debian-12 is named by a server/);

    // Imaging refusals: 400 members, another organization's server 404, a region selling no images 404.
    const noTerm = await take(ids.src, { name: 'a', term_months: 2, currency: 'USD' });
    expect(noTerm.status).toBe(400);
    expect(noTerm.body).toEqual(errorBody(noTerm, 'invalid_request', 'term_months must be 1, 3 or 12', { field: 'term_months' }));
    const badName = await take(ids.src, { name: '-x', term_months: 1, currency: 'USD' });
    expect(badName.status).toBe(400);
    expect(badName.body.error).toMatchObject({ code: 'invalid_request', details: { field: 'name' } });
    const notMine = await take(ids.src, { name: 'a', term_months: 1, currency: 'USD' }, other);
    expect(notMine.status).toBe(404);
    expect(notMine.body).toEqual(errorBody(notMine, 'not_found', `Server ${ids.src} not found`));
    await t.sql(`UPDATE regions SET snapshot_price_usd_minor = NULL, snapshot_price_idr_minor = NULL WHERE id = 'sg-sin'`);
    const noOffer = await take(ids.sin, { name: 'a', term_months: 1, currency: 'USD' });
    expect(noOffer.status).toBe(404);
    expect(noOffer.body).toEqual(errorBody(noOffer, 'not_found', 'Region sg-sin sells no images'));
    expect(await t.sql(`SELECT count(*)::int AS n FROM server_images WHERE org_id = 'org_imo'`)).toEqual([{ n: 1 }]);
  });

  it('refuses a server with an unfinished operation (details.operation_id), neither running nor stopped, or suspended (details.reason): 409 invalid_state, nothing left behind', async () => {
    const before = { images: await t.sql(`SELECT id FROM server_images ORDER BY id`), balances: await balances('org_imo') };
    const server = ids.src;
    expect(await t.sql(`SELECT status FROM servers WHERE id = $1`, [server])).toEqual([{ status: 'running' }]);
    try {
      await t.sql(`INSERT INTO operations (id, org_id, type, status, vm_id, steps) VALUES ('op_imbusy0000000000000000', 'org_imo', 'vm.reboot', 'pending', $1, '[]')`, [server]);
      const busy = await take(server, { name: 'busy', term_months: 1, currency: 'USD' });
      expect(busy.status).toBe(409);
      expect(busy.body).toEqual(
        errorBody(busy, 'invalid_state', `Server ${server} has an unfinished operation op_imbusy0000000000000000; wait for it to end`, { operation_id: 'op_imbusy0000000000000000' }),
      );
      await t.sql(`DELETE FROM operations WHERE id = 'op_imbusy0000000000000000'`);
      await t.sql(`UPDATE servers SET status = 'rebooting' WHERE id = $1`, [server]);
      const rebooting = await take(server, { name: 'rebooting', term_months: 1, currency: 'USD' });
      expect(rebooting.status).toBe(409);
      expect(rebooting.body).toEqual(errorBody(rebooting, 'invalid_state', `Server ${server} is rebooting; an image needs a running or stopped server`));
      await t.sql(`UPDATE servers SET status = 'suspended', suspended_at = $2, release_at = $3 WHERE id = $1`, [server, NOW, at(NOW, 86_400)]);
      const suspended = await take(server, { name: 'suspended', term_months: 1, currency: 'USD' });
      expect(suspended.status).toBe(409);
      expect(suspended.body).toEqual(errorBody(suspended, 'invalid_state', `Server ${server} is suspended (its term ended); renew it to image it`, { reason: 'suspended' }));
    } finally {
      await t.sql(`DELETE FROM operations WHERE id = 'op_imbusy0000000000000000'`);
      await t.sql(`UPDATE servers SET status = 'running', suspended_at = NULL, release_at = NULL WHERE id = $1`, [server]);
    }
    expect({ images: await t.sql(`SELECT id FROM server_images ORDER BY id`), balances: await balances('org_imo') }).toEqual(before);
  });

  it('while the compute provider is down, imaging a server is 503 provider_unavailable: no image, operation or hold', async () => {
    const before = { images: await t.sql(`SELECT id FROM server_images ORDER BY id`), ops: await t.sql(`SELECT id FROM operations ORDER BY id`), balances: await balances('org_imo') };
    await setComputeProviderDown(t, true);
    try {
      const down = await take(ids.src, { name: 'while-down', term_months: 1, currency: 'USD' });
      expect(down.status).toBe(503);
      expect(down.body).toEqual(errorBody(down, 'provider_unavailable', 'The compute provider is unavailable; nothing was reserved. Retry later'));
    } finally {
      await setComputeProviderDown(t, false);
    }
    expect({ images: await t.sql(`SELECT id FROM server_images ORDER BY id`), ops: await t.sql(`SELECT id FROM operations ORDER BY id`), balances: await balances('org_imo') }).toEqual(before);
  });

  it('at most 100 live images per organization: 409 quota_exceeded with details.limit, counted in the database', async () => {
    expect(await t.sql(`SELECT org_id, live FROM org_image_counts ORDER BY org_id`)).toEqual([{ org_id: 'org_imo', live: 1 }]);
    await t.sql(`UPDATE org_image_counts SET live = 100 WHERE org_id = 'org_imo'`);
    const full = await take(ids.src, { name: 'one-more', term_months: 1, currency: 'USD' });
    expect(full.status).toBe(409);
    expect(full.body).toEqual(errorBody(full, 'quota_exceeded', 'The organization has 100 images already (the limit); delete one first', { limit: 100 }));
    expect(await t.sql(`SELECT count(*)::int AS n FROM server_images WHERE org_id = 'org_imo'`)).toEqual([{ n: 1 }]);
    await t.sql(`UPDATE org_image_counts SET live = 1 WHERE org_id = 'org_imo'`);
  });

  it('5 creates racing for the last 2 slots (on PostgreSQL, concurrent connections): exactly 2 accepted, 3 quota_exceeded, each accepted one held once; a replay answers the same', async () => {
    await t.sql(`UPDATE org_image_counts SET live = 98 WHERE org_id = 'org_imo'`);
    const servers = [ids.src, ids.small, ids.src, ids.small, ids.src];
    const replies = await Promise.all(servers.map((id, i) => take(id, { name: `race-${i}`, term_months: 1, currency: 'USD' })));
    expect(replies.map((r) => r.status).sort()).toEqual([202, 202, 409, 409, 409]);
    for (const r of replies.filter((x) => x.status === 409)) {
      expect(r.body).toEqual(errorBody(r, 'quota_exceeded', 'The organization has 100 images already (the limit); delete one first', { limit: 100 }));
    }
    const accepted = replies.filter((x) => x.status === 202).map((r) => r.body.image.id as string);
    expect(await t.sql(`SELECT count(*)::int AS n FROM server_images WHERE name LIKE 'race-%'`)).toEqual([{ n: 2 }]);
    expect(await t.sql(`SELECT live FROM org_image_counts WHERE org_id = 'org_imo'`)).toEqual([{ live: 100 }]);
    expect(await t.sql(`SELECT count(*)::int AS n FROM wallet_ledger l JOIN operations o ON o.id = l.operation_id
                         WHERE o.type = 'image.create' AND o.params->>'image_id' = ANY($1::text[]) AND l.kind = 'hold'`, [accepted])).toEqual([{ n: 2 }]);
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 2, failed: 0 });
    // Deleted again: the slots free, the counter back to the one live image (and the 98 it was set to, less the test's own).
    for (const id of accepted) expect((await t.http.delete(`/v1/images/${id}`).set(rw)).status).toBe(202);
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 2 });
    expect(await t.sql(`SELECT live FROM org_image_counts WHERE org_id = 'org_imo'`)).toEqual([{ live: 98 }]);
    await t.sql(`UPDATE org_image_counts SET live = 1 WHERE org_id = 'org_imo'`);

    // The same Idempotency-Key and body: the stored answer, one image, one hold.
    const key = { 'Idempotency-Key': 'img-replay-1' };
    const first = await t.http.post(`/v1/servers/${ids.small}/images`).set(rw).set(key).send({ name: 'replayed', term_months: 1, currency: 'USD' });
    expect(first.status).toBe(202);
    const again = await t.http.post(`/v1/servers/${ids.small}/images`).set(rw).set(key).send({ name: 'replayed', term_months: 1, currency: 'USD' });
    expect(again.status).toBe(202);
    expect(again.body).toEqual(first.body);
    const other = await t.http.post(`/v1/servers/${ids.small}/images`).set(rw).set(key).send({ name: 'another', term_months: 1, currency: 'USD' });
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('idempotency_conflict');
    expect(await t.sql(`SELECT count(*)::int AS n FROM server_images WHERE name IN ('replayed', 'another')`)).toEqual([{ n: 1 }]);
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1 });
    // 40 GB × 0.01 USD, captured once.
    expect(await ledger(first.body.operation.id)).toEqual([
      { kind: 'hold', currency: 'USD', amount: '40000' },
      { kind: 'capture', currency: 'USD', amount: '40000' },
    ]);
    expect((await t.http.delete(`/v1/images/${first.body.image.id}`).set(rw)).status).toBe(202);
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1 });
  });

  it('a provider refusal gives the money back: the server\'s instance gone at the provider fails image.create, the image deleted (purchase_failed)', async () => {
    await t.sql(`UPDATE provider_instances SET deleted_at = now() WHERE server_id = $1 AND deleted_at IS NULL`, [ids.small]);
    const res = await take(ids.small, { name: 'lost', term_months: 1, currency: 'USD' });
    expect(res.status).toBe(202);
    expect(await advance.runUntilIdle()).toMatchObject({ failed: 1 });
    const op = await t.http.get(`/v1/operations/${res.body.operation.id}`).set(rw);
    expect(op.body).toMatchObject({
      status: 'failed',
      steps: [{ name: 'payment_reserved', status: 'succeeded' }, { name: 'imaging', status: 'failed' }],
      error: { code: 'invalid_state', message: `The compute provider has no instance for server ${ids.small}` },
    });
    expect((await image(res.body.image.id)).body).toMatchObject({ status: 'deleted', deleted_reason: 'purchase_failed', deleted_at: expect.any(String) });
    expect(await ledger(res.body.operation.id)).toEqual([
      { kind: 'hold', currency: 'USD', amount: '40000' },
      { kind: 'release', currency: 'USD', amount: '40000' },
    ]);
    expect(await t.sql(`SELECT image_id FROM provider_images WHERE image_id = $1 AND deleted_at IS NULL`, [res.body.image.id])).toEqual([]);
    expect(await t.sql(`SELECT live FROM org_image_counts WHERE org_id = 'org_imo'`)).toEqual([{ live: 1 }]);
    // The instance back at the provider (the test's own outage over).
    await t.sql(`UPDATE provider_instances SET deleted_at = NULL WHERE server_id = $1 AND instance_id = (SELECT instance_id FROM provider_instances WHERE server_id = $1 ORDER BY deleted_at DESC NULLS FIRST LIMIT 1)`, [ids.small]);
  });

  it('outlives its server; DELETE makes an image deleting, image.delete deletes it at the provider; the servers made from it keep running', async () => {
    // A second image, of copy-1 (itself made from the first), stopped.
    const res = await take(ids.copy1, { name: 'second', term_months: 3, currency: 'IDR' });
    expect(res.status).toBe(202);
    // 80 GB × 160 IDR × 3 = 38400 IDR.
    expect(res.body.image).toMatchObject({ os: imgId, disk_gb: 80, billing: { currency: 'IDR', amount: '38400' } });
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1 });
    const second = res.body.image.id as string;

    const delServer = await t.http.delete(`/v1/servers/${ids.copy1}`).set(rw);
    expect(delServer.status).toBe(202);
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1 });
    expect((await image(second)).body).toMatchObject({ status: 'available', from_server_id: ids.copy1 });

    const del = await t.http.delete(`/v1/images/${second}`).set(rw);
    expect(del.status).toBe(202);
    expect(del.body.image).toMatchObject({ id: second, status: 'deleting' });
    expect(del.body.operation).toMatchObject({ type: 'image.delete', image_id: second, steps: [{ name: 'deleting', status: 'pending' }] });
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1 });
    expect((await image(second)).body).toMatchObject({ status: 'deleted', deleted_reason: 'customer', deleted_at: expect.any(String) });
    expect(await t.sql(`SELECT deleted_at IS NOT NULL AS gone FROM provider_images WHERE image_id = $1`, [second])).toEqual([{ gone: true }]);
    const again = await t.http.delete(`/v1/images/${second}`).set(rw);
    expect(again.status).toBe(409);
    expect(again.body).toEqual(errorBody(again, 'invalid_state', `Image ${second} is deleted already`));
    const gone = await buy({ name: 'from-deleted', plan: 'cx2', image: second });
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual(errorBody(gone, 'not_found', `Image ${second} not found`));
    expect(await t.sql(`SELECT action, actor_type FROM audit_log WHERE target_id = $1 ORDER BY seq`, [second])).toEqual([
      { action: 'image.create', actor_type: 'api_key' },
      { action: 'image.delete', actor_type: 'api_key' },
    ]);
    expect(await t.sql(`SELECT org_id, live FROM org_image_counts ORDER BY org_id`)).toEqual([{ org_id: 'org_imo', live: 1 }]);
  });

  it('renews at the frozen price (80 GB × 0.01 × 3 = 2.40000 USD) and PATCH changes name and labels (audited)', async () => {
    const res = await t.http.post(`/v1/images/${imgId}/renew`).set(rw).send({ term_months: 3 });
    expect(res.status).toBe(202);
    expect(res.body.operation).toMatchObject({ type: 'image.renew', image_id: imgId, steps: [{ name: 'renewing', status: 'running' }] });
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1 });
    imgExpires = '2027-03-23T10:00:05.000Z';
    expect((await image(imgId)).body).toMatchObject({ status: 'available', term_months: 3, billing: { currency: 'USD', amount: '2.40000' }, expires_at: imgExpires });
    expect(await ledger(res.body.operation.id)).toEqual([
      { kind: 'hold', currency: 'USD', amount: '240000' },
      { kind: 'capture', currency: 'USD', amount: '240000' },
    ]);
    const patch = await t.http.patch(`/v1/images/${imgId}`).set(rw).send({ name: 'golden-2', labels: {} });
    expect(patch.status).toBe(200);
    expect(patch.body).toEqual({ ...(await image(imgId)).body, name: 'golden-2', labels: {} });
    expect(await t.sql(`SELECT data FROM audit_log WHERE action = 'image.update' AND target_id = $1`, [imgId])).toEqual([
      { data: { changes: { name: { old: 'golden', new: 'golden-2' }, labels: { old: { role: 'web' }, new: {} } } } },
    ]);
  });

  it('at the end of its term it is suspended (no server is made from it: 409), then released: deleted, reason expired, image.deleted announced', async () => {
    const terms = t.app.get(ImageTerms);
    clock.set(new Date(imgExpires));
    expect(await terms.execute()).toBe(1);
    expect(await terms.execute()).toBe(0);
    expect((await image(imgId)).body).toMatchObject({ status: 'suspended', suspended_at: imgExpires, release_at: at(imgExpires, 120) });
    expect(await t.sql(`SELECT actor_type, data FROM audit_log WHERE action = 'image.suspend' AND target_id = $1`, [imgId])).toEqual([
      { actor_type: 'system', data: { suspended_at: imgExpires, release_at: at(imgExpires, 120) } },
    ]);
    const refused = await buy({ name: 'from-suspended', plan: 'cx2', image: imgId });
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual(errorBody(refused, 'invalid_state', `Image ${imgId} is suspended (its term ended); renew it to build servers from it`, { reason: 'suspended' }));
    const rebuildRefused = await t.http.post(`/v1/servers/${ids.third}/rebuild`).set(rw).send({ image: imgId });
    expect(rebuildRefused.status).toBe(409);
    expect(rebuildRefused.body.error).toMatchObject({ code: 'invalid_state', details: { reason: 'suspended' } });
    expect(await t.sql(`SELECT name FROM servers WHERE name = 'from-suspended'`)).toEqual([]);

    clock.set(new Date(at(imgExpires, 120)));
    expect(await terms.execute()).toBe(1);
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1 });
    const released = (await image(imgId)).body;
    expect(released).toMatchObject({ status: 'deleted', deleted_reason: 'expired', suspended_at: null, release_at: null, deleted_at: at(imgExpires, 120) });
    expect(await t.sql(`SELECT actor_type, data->>'reason' AS reason FROM audit_log WHERE action = 'image.delete' AND target_id = $1`, [imgId])).toEqual([
      { actor_type: 'system', reason: 'expired' },
    ]);
    expect(await t.sql(`SELECT deleted_at IS NOT NULL AS gone FROM provider_images WHERE image_id = $1`, [imgId])).toEqual([{ gone: true }]);
    expect(await t.sql(`SELECT org_id, live FROM org_image_counts ORDER BY org_id`)).toEqual([{ org_id: 'org_imo', live: 0 }]);
    // image.deleted: the Image as its GET shows it, deleted_reason saying why (4 deleted by the customer, 1 failed purchase, 1 released).
    const events = await t.sql<{ body: string }>(`SELECT body FROM webhook_events WHERE type = 'image.deleted' ORDER BY created_at, id`);
    const bodies = events.map((e) => JSON.parse(e.body) as { data: { id: string; deleted_reason: string } });
    expect(bodies.map((b) => b.data.deleted_reason).sort()).toEqual(['customer', 'customer', 'customer', 'customer', 'expired', 'purchase_failed']);
    expect(bodies.find((b) => b.data.id === imgId)?.data).toEqual(released);
    // The servers made from it keep running.
    expect((await t.http.get(`/v1/servers/${ids.third}`).set(rw)).body).toMatchObject({ status: 'running', image: imgId });
  });

  it('cli verify finds every image charged once and every live one at the provider, and reports one missing there', async () => {
    const verify = async () => {
      const r = await t.app.get(VerifyInvariants).execute();
      return r.violations.filter((v) => v.check !== 'webhooks.deliveries_on_schedule');
    };
    const made = await take(ids.src, { name: 'last', term_months: 1, currency: 'USD' });
    expect(made.status).toBe(202);
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1 });
    expect(await verify()).toEqual([]);
    const report = await t.app.get(VerifyInvariants).execute();
    expect(report.checks.map((c) => c.name)).toEqual(expect.arrayContaining(['images.charged_once', 'images.counts_match', 'provider.images_match']));
    const live = made.body.image.id as string;
    await t.sql(`UPDATE provider_images SET deleted_at = now() WHERE image_id = $1`, [live]);
    expect(await verify()).toEqual([
      { check: 'provider.images_match', subject: live, message: 'available image is missing at the compute provider', details: { org_id: 'org_imo' } },
    ]);
    await t.sql(`UPDATE provider_images SET deleted_at = NULL WHERE image_id = $1`, [live]);
    await t.sql(`UPDATE org_image_counts SET live = live + 1 WHERE org_id = 'org_imo'`);
    expect(await verify()).toEqual([
      { check: 'images.counts_match', subject: 'org_imo', message: '1 live image(s), counter 2', details: { scope: 'org_imo', counted: 2, live: 1 } },
    ]);
    await t.sql(`UPDATE org_image_counts SET live = live - 1 WHERE org_id = 'org_imo'`);
    // Left suspended past its release_at (the term sweep missed it): named by terms.deadlines_met.
    await t.sql(`UPDATE server_images SET status = 'suspended', suspended_at = '2026-01-01T00:00:00Z', release_at = '2026-01-02T00:00:00Z' WHERE id = $1`, [live]);
    expect(await verify()).toEqual([
      {
        check: 'terms.deadlines_met', subject: live, message: 'suspended past its release_at (2026-01-02T00:00:00.000Z) by more than 65 s',
        details: { org_id: 'org_imo', status: 'suspended', release_at: '2026-01-02T00:00:00.000Z' },
      },
    ]);
    await t.sql(`UPDATE server_images SET status = 'available', suspended_at = NULL, release_at = NULL WHERE id = $1`, [live]);
    expect(await verify()).toEqual([]);
  });
});
