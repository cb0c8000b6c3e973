import { OWNER_PASSWORD, apiToken, bearer, organization, region } from '../support/fixtures';
import { TestApp, startTestApp } from '../support/test-app';

const ERROR = (res: { headers: Record<string, string> }, code: string, message: string, details: object = {}) => ({
  error: { code, message, request_id: res.headers['x-request-id'], details },
});

/** What a seeded server shows (servers.md): running, an ipv4, no labels, no protection, null purchase members. */
const seeded = (id: string, name: string, ipv4: string, zone: string, volumeIds: string[], ipv6: string) => ({
  id,
  name,
  status: 'running',
  region: 'id-jkt',
  zone,
  plan: null,
  vcpus: null,
  memory_gb: null,
  disk_gb: null,
  image: null,
  ipv4,
  reserved_ip: null,
  ipv6,
  private_networks: [],
  term_months: null,
  billing: null,
  price_per_month: null,
  expires_at: null,
  labels: {},
  delete_protection: false,
  volume_ids: volumeIds,
  ssh_key_ids: [],
  created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
  deleted_at: null,
  deleted_reason: null, suspended_at: null, release_at: null, auto_renew: { enabled: false, term_months: null, last_attempt: null, next_attempt_at: null },
});

/**
 * GET /v1/servers and GET /v1/servers/{id}: seeded servers as servers.md shows them, bought ones
 * with their frozen plan and price, deleted ones on request, filters and cursor pages; PATCH with
 * the volume PATCH rules and its audit rows.
 */
describe('servers: reads and edits', () => {
  let t: TestApp;
  const rw = bearer(apiToken('sr', 'rw'));
  const other = bearer(apiToken('so', 'rw'));
  const auditOnly = bearer(apiToken('sr', 'au'));

  beforeAll(async () => {
    t = await startTestApp();
    await t.seed({
      server_plans: [{ id: 'cx2', vcpus: 2, memory_gb: 4, disk_gb: 80 }],
      images: [{ id: 'debian-12', name: 'Debian 12', type: 'system' }],
      regions: [
        region('id-jkt', {
          zones: [{ id: 'id-jkt-a', available: true }, { id: 'id-jkt-b', available: true }],
          server_offer: { vcpu_capacity: 8, terms: [1], plans: [{ plan: 'cx2', price_per_month: { USD: '9.00000', IDR: '144000' } }] },
        }),
      ],
      organizations: [
        organization('sr', {
          members: [
            { email: 'owner@sr.test', password: OWNER_PASSWORD, role: 'owner' },
            { email: 'dev@sr.test', password: OWNER_PASSWORD, role: 'developer' },
            { email: 'viewer@sr.test', password: OWNER_PASSWORD, role: 'viewer' },
          ],
          api_keys: [
            { name: 'rw', scopes: ['vm:read', 'vm:write'], token: apiToken('sr', 'rw') },
            { name: 'audit', scopes: ['audit:read'], token: apiToken('sr', 'au') },
          ],
          servers: [
            { id: 'vm_srweb1', name: 'web-1', region: 'id-jkt', zone: 'id-jkt-a' },
            { id: 'vm_srdb1', name: 'db-1.internal', region: 'id-jkt', zone: 'id-jkt-b' },
          ],
          volumes: [
            ...['vol_srdata2', 'vol_srdata1'].map((id) => ({
              id, name: id.slice(4), type: 'premium', region: 'id-jkt', zone: 'id-jkt-a', size_gb: 10, term_months: 1, currency: 'USD', server: 'vm_srweb1',
            })),
            { id: 'vol_srloose', name: 'loose', type: 'premium', region: 'id-jkt', zone: 'id-jkt-b', size_gb: 10, term_months: 1, currency: 'USD' },
          ],
        }),
        organization('so', { servers: [{ id: 'vm_soweb1', name: 'web-1', region: 'id-jkt', zone: 'id-jkt-a' }], volumes: [] }),
      ],
    });
    // A bought server, as a purchase leaves it once ready (labels and protection set by PATCH).
    await t.sql(
      `INSERT INTO servers (id, org_id, name, region_id, zone_id, plan_id, vcpus, memory_gb, disk_gb, image_id, ipv4, term_months,
                            billing_currency, billing_amount, price_usd_minor, price_idr_minor, expires_at, labels, delete_protection, created_at)
       VALUES ('vm_srbought', 'org_sr', 'app-1', 'id-jkt', 'id-jkt-b', 'cx2', 2, 4, 80, 'debian-12', '100.64.9.9', 1, 'IDR', 144000,
               900000, 144000, '2027-01-05T10:00:00Z', '{"env": "prod", "team": "web"}', true, now() + interval '1 second')`,
    );
  });
  afterAll(async () => t?.close());

  it('seeded servers show running, an ipv4 each, their live volumes by id, and null purchase members', async () => {
    const web = await t.http.get('/v1/servers/vm_srweb1').set(rw);
    expect(web.status).toBe(200);
    expect(web.body).toEqual(seeded('vm_srweb1', 'web-1', '100.64.0.1', 'id-jkt-a', ['vol_srdata1', 'vol_srdata2'], '2001:db8:1:1::1'));
    const db = await t.http.get('/v1/servers/vm_srdb1').set(rw);
    expect(db.body).toEqual(seeded('vm_srdb1', 'db-1.internal', '100.64.0.2', 'id-jkt-b', [], '2001:db8:1:2::1'));
    // Seeded servers count no vCPUs.
    expect(await t.sql("SELECT vcpus_used::int AS u FROM region_usage WHERE id = 'id-jkt'")).toEqual([{ u: 2 }]);
  });

  it('a bought server shows its frozen plan, image, term, billing, price and expiry', async () => {
    const res = await t.http.get('/v1/servers/vm_srbought').set(rw);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: 'vm_srbought',
      name: 'app-1',
      status: 'running',
      region: 'id-jkt',
      zone: 'id-jkt-b',
      plan: 'cx2',
      vcpus: 2,
      memory_gb: 4,
      disk_gb: 80,
      image: 'debian-12',
      ipv4: '100.64.9.9',
      reserved_ip: null,
      ipv6: '2001:db8:1:4::1',
      private_networks: [],
      term_months: 1,
      billing: { currency: 'IDR', amount: '144000' },
      price_per_month: { USD: '9.00000', IDR: '144000' },
      expires_at: '2027-01-05T10:00:00.000Z',
      labels: { env: 'prod', team: 'web' },
      delete_protection: true,
      volume_ids: [],
      ssh_key_ids: [],
      created_at: expect.any(String),
      deleted_at: null,
      deleted_reason: null, suspended_at: null, release_at: null, auto_renew: { enabled: false, term_months: null, last_attempt: null, next_attempt_at: null },
    });
  });

  it('lists newest first, 50 a page by default, with filters and cursor pages', async () => {
    const all = await t.http.get('/v1/servers').set(rw);
    expect(all.status).toBe(200);
    // The seeded two share created_at (one transaction): the id breaks the tie, descending.
    expect(all.body.servers.map((s: { id: string }) => s.id)).toEqual(['vm_srbought', 'vm_srweb1', 'vm_srdb1']);
    expect(all.body.next_cursor).toBeNull();
    expect(all.body.servers[2]).toEqual((await t.http.get('/v1/servers/vm_srdb1').set(rw)).body);

    const ids = async (query: string) => {
      const res = await t.http.get(`/v1/servers?${query}`).set(rw);
      expect(res.status).toBe(200);
      return res.body.servers.map((s: { id: string }) => s.id);
    };
    expect(await ids('zone=id-jkt-b')).toEqual(['vm_srbought', 'vm_srdb1']);
    expect(await ids('region=id-jkt&name=web-1')).toEqual(['vm_srweb1']);
    expect(await ids('region=sg-sin')).toEqual([]);
    expect(await ids('label=env=prod')).toEqual(['vm_srbought']);
    expect(await ids('label=env=prod&label=team=db')).toEqual([]);
    // Every label given must match, even two values of one key (none can).
    expect(await ids('label=env=prod&label=env=prod')).toEqual(['vm_srbought']);
    expect(await ids('label=env=prod&label=env=dev')).toEqual([]);
    expect(await ids('status=running&zone=id-jkt-a')).toEqual(['vm_srweb1']);

    const first = await t.http.get('/v1/servers?limit=2').set(rw);
    expect(first.body.servers.map((s: { id: string }) => s.id)).toEqual(['vm_srbought', 'vm_srweb1']);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const second = await t.http.get(`/v1/servers?limit=2&cursor=${first.body.next_cursor}`).set(rw);
    expect(second.body).toEqual({ servers: [expect.objectContaining({ id: 'vm_srdb1' })], next_cursor: null });
  });

  it('a deleted server leaves the default list, keeps being readable, shows deleted and no ipv4, and gives its vCPUs back', async () => {
    await t.sql("UPDATE servers SET deleted_at = '2026-11-30T00:00:00Z' WHERE id = 'vm_srbought'");
    const res = await t.http.get('/v1/servers/vm_srbought').set(rw);
    expect(res.body).toMatchObject({ id: 'vm_srbought', status: 'deleted', ipv4: null, deleted_at: '2026-11-30T00:00:00.000Z' });
    const ids = async (query: string) => (await t.http.get(`/v1/servers?${query}`).set(rw)).body.servers.map((s: { id: string }) => s.id);
    expect(await ids('')).toEqual(['vm_srweb1', 'vm_srdb1']);
    expect(await ids('status=deleted')).toEqual(['vm_srbought']);
    expect(await t.sql("SELECT vcpus_used::int AS u FROM region_usage WHERE id = 'id-jkt'")).toEqual([{ u: 0 }]);
  });

  it('another organization\'s server is 404; bad filters are 400 naming the parameter; 401 and 403 as every GET', async () => {
    const foreign = await t.http.get('/v1/servers/vm_soweb1').set(rw);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(ERROR(foreign, 'not_found', 'Server vm_soweb1 not found'));
    expect((await t.http.get('/v1/servers').set(other)).body.servers.map((s: { id: string }) => s.id)).toEqual(['vm_soweb1']);

    const cases: [string, string, string][] = [
      ['status=gone', 'status', 'status must be one of creating, running, stopping, stopped, starting, rebooting, suspended, deleting, deleted'],
      ['limit=0', 'limit', 'limit must be a whole number from 1 to 100'],
      ['limit=101', 'limit', 'limit must be a whole number from 1 to 100'],
      ['name=-bad', 'name', 'name must be 1 to 63 letters, digits, "." or "-", starting and ending with a letter or digit'],
      ['cursor=xyz', 'cursor', 'cursor is not a valid cursor; pass the next_cursor of a previous page'],
      ['label=novalue', 'label', expect.any(String) as unknown as string],
      ['zone=', 'zone', 'zone must not be empty'],
    ];
    for (const [query, field, message] of cases) {
      const res = await t.http.get(`/v1/servers?${query}`).set(rw);
      expect({ query, status: res.status }).toEqual({ query, status: 400 });
      expect(res.body).toEqual(ERROR(res, 'invalid_request', message, { field }));
    }
    const anonymous = await t.http.get('/v1/servers');
    expect(anonymous.status).toBe(401);
    const noScope = await t.http.get('/v1/servers/vm_srweb1').set(auditOnly);
    expect(noScope.status).toBe(403);
    expect(noScope.body).toEqual(ERROR(noScope, 'forbidden', 'The API key lacks the scope vm:read'));
  });

  it('seed: a server name breaking the hostname rule is 400; a name taken in the organization is a conflict; nothing is written', async () => {
    const refusal = async (file: object) => {
      try {
        await t.seed(file);
        return 'loaded';
      } catch (err) {
        const e = err as { code: string; message: string; details?: unknown };
        return { code: e.code, message: e.message, details: e.details };
      }
    };
    expect(await refusal({ regions: [], organizations: [organization('sx', { servers: [{ name: 'web_1', region: 'id-jkt', zone: 'id-jkt-a' }], volumes: [] })] })).toEqual({
      code: 'invalid_request',
      message: 'Seed file: organizations[0].servers[0].name must be 1 to 63 letters, digits, "." or "-", starting and ending with a letter or digit',
      details: { field: 'organizations[0].servers[0].name' },
    });
    const twice = [{ name: 'web-1', region: 'id-jkt', zone: 'id-jkt-a' }, { name: 'web-1', region: 'id-jkt', zone: 'id-jkt-b' }];
    expect(await refusal({ regions: [], organizations: [organization('sx', { servers: twice, volumes: [] })] })).toEqual({
      code: 'conflict',
      message: 'Server name web-1 is taken in organization org_sx',
      details: undefined,
    });
    expect(await t.sql("SELECT count(*)::int AS n FROM organizations WHERE id = 'org_sx'")).toEqual([{ n: 0 }]);
  });

  describe('PATCH /v1/servers/{id}', () => {
    const login = async (email: string) => {
      const res = await t.http.post('/v1/auth/login').send({ email, password: OWNER_PASSWORD });
      expect(res.status).toBe(200);
      return { Authorization: `Bearer ${res.body.token as string}` };
    };
    const audits = () =>
      t.sql("SELECT actor_type, action, target_type, target_id, data FROM audit_log WHERE action = 'server.update' ORDER BY seq");

    it('renames, replaces labels and turns protection on, answering the Server, with one audit row of old and new', async () => {
      const res = await t.http.patch('/v1/servers/vm_srweb1').set(rw).send({ name: 'web-2', labels: { env: 'prod' }, delete_protection: true });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        ...seeded('vm_srweb1', 'web-2', '100.64.0.1', 'id-jkt-a', ['vol_srdata1', 'vol_srdata2'], '2001:db8:1:1::1'),
        labels: { env: 'prod' },
        delete_protection: true,
      });
      expect((await t.http.get('/v1/servers/vm_srweb1').set(rw)).body).toEqual(res.body);
      // The same body again changes nothing and writes no second row.
      const again = await t.http.patch('/v1/servers/vm_srweb1').set(rw).send({ name: 'web-2', labels: { env: 'prod' }, delete_protection: true });
      expect(again.body).toEqual(res.body);
      expect(await audits()).toEqual([
        {
          actor_type: 'api_key',
          action: 'server.update',
          target_type: 'server',
          target_id: 'vm_srweb1',
          data: {
            changes: {
              name: { old: 'web-1', new: 'web-2' },
              labels: { old: {}, new: { env: 'prod' } },
              delete_protection: { old: false, new: true },
            },
          },
        },
      ]);
    });

    it('a developer session may not turn protection off (403 before the body 400); an admin key may', async () => {
      const dev = await login('dev@sr.test');
      const refused = await t.http.patch('/v1/servers/vm_srweb1').set(dev).send({ delete_protection: false, name: '-bad-' });
      expect(refused.status).toBe(403);
      expect(refused.body).toEqual(ERROR(refused, 'forbidden', 'Role developer may not turn delete_protection off; it needs one of: admin, owner'));
      const viewer = await login('viewer@sr.test');
      const read = await t.http.patch('/v1/servers/vm_srweb1').set(viewer).send({ labels: {} });
      expect(read.status).toBe(403);
      const renamed = await t.http.patch('/v1/servers/vm_srweb1').set(dev).send({ labels: {} });
      expect(renamed.status).toBe(200);
      expect(renamed.body).toMatchObject({ labels: {}, delete_protection: true });
      const off = await t.http.patch('/v1/servers/vm_srweb1').set(rw).send({ delete_protection: false });
      expect(off.status).toBe(200);
      expect(off.body.delete_protection).toBe(false);
    });

    it('400 naming the member, 404, 409 conflict naming the holder, 409 invalid_state for a deleted server; nothing written', async () => {
      const before = await audits();
      const cases: [object, string, string][] = [
        [{ name: 'db_1' }, 'name', 'name must be 1 to 63 letters, digits, "." or "-", starting and ending with a letter or digit'],
        [{ name: 'a'.repeat(64) }, 'name', 'name must be 1 to 63 letters, digits, "." or "-", starting and ending with a letter or digit'],
        [{ name: null }, 'name', 'name must be a string: 1 to 63 letters, digits, "." or "-", starting and ending with a letter or digit'],
        [{ labels: ['x'] }, 'labels', 'labels must be an object of string values'],
        [{ labels: { Env: 'x' } }, 'labels.Env', 'labels: key "Env" must be 1 to 63 of a-z, 0-9, ".", "_", "/", "-"'],
        [{ delete_protection: 'yes' }, 'delete_protection', 'delete_protection must be true or false'],
      ];
      for (const [body, field, message] of cases) {
        const res = await t.http.patch('/v1/servers/vm_srweb1').set(rw).send(body);
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
        expect(res.body).toEqual(ERROR(res, 'invalid_request', message, { field }));
      }
      const missing = await t.http.patch('/v1/servers/vm_soweb1').set(rw).send({ name: 'x' });
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual(ERROR(missing, 'not_found', 'Server vm_soweb1 not found'));
      const taken = await t.http.patch('/v1/servers/vm_srweb1').set(rw).send({ name: 'db-1.internal' });
      expect(taken.status).toBe(409);
      expect(taken.body).toEqual(ERROR(taken, 'conflict', 'Server name db-1.internal is taken by another server of the organization', { existing_id: 'vm_srdb1' }));
      // A deleted server's name is free again.
      const freed = await t.http.patch('/v1/servers/vm_srweb1').set(rw).send({ name: 'app-1' });
      expect(freed.status).toBe(200);
      const deleted = await t.http.patch('/v1/servers/vm_srbought').set(rw).send({ labels: {} });
      expect(deleted.status).toBe(409);
      expect(deleted.body).toEqual(ERROR(deleted, 'invalid_state', 'Server vm_srbought is deleted and cannot be changed'));
      expect((await audits()).length).toBe(before.length + 1);
      expect((await t.http.get('/v1/servers/vm_srbought').set(rw)).body.labels).toEqual({ env: 'prod', team: 'web' });
    });
  });

  it('a creating or deleting server takes no disk (409 invalid_state) and volume-options leaves it out; a stopped one takes one', async () => {
    const zoneB = async () =>
      (await t.http.get('/v1/volume-options?region=id-jkt').set(rw)).body.zones.find((z: { id: string }) => z.id === 'id-jkt-b').servers;
    expect(await zoneB()).toEqual([{ id: 'vm_srdb1', name: 'db-1.internal' }]);
    for (const status of ['creating', 'deleting']) {
      await t.sql('UPDATE servers SET status = $1 WHERE id = $2', [status, 'vm_srdb1']);
      const res = await t.http.post('/v1/volumes/vol_srloose/attach').set(rw).send({ server_id: 'vm_srdb1' });
      expect(res.status).toBe(409);
      expect(res.body).toEqual(ERROR(res, 'invalid_state', `Server vm_srdb1 is ${status} and cannot take a disk`));
      expect(await zoneB()).toEqual([]);
    }
    expect(await t.sql("SELECT count(*)::int AS n FROM operations WHERE volume_id = 'vol_srloose'")).toEqual([{ n: 0 }]);
    await t.sql("UPDATE servers SET status = 'stopped' WHERE id = 'vm_srdb1'");
    expect(await zoneB()).toEqual([{ id: 'vm_srdb1', name: 'db-1.internal' }]);
    const attached = await t.http.post('/v1/volumes/vol_srloose/attach').set(rw).send({ server_id: 'vm_srdb1' });
    expect(attached.status).toBe(202);
    expect(attached.body.operation).toMatchObject({ type: 'volume.attach', status: 'pending' });
  });
});
