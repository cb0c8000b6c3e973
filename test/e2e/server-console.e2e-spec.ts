import { scaled } from '../support/deadlines';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorBody } from '../support/assertions';
import { createTestDatabase, TestDatabase } from '../support/database';
import { apiToken, bearer, organization, region } from '../support/fixtures';
import { processHttp } from '../support/openapi-validation';
import { ServerProcess, runCli, startServerProcess, tempDir } from '../support/processes';
import { setComputeProviderDown } from '../support/provider';
import { TestApp, startTestApp } from '../support/test-app';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const URL_PATTERN = /^wss:\/\/console\.compute\.invalid\/v1\/vnc\/(ins_[0-9a-f]{20})\?token=([A-Za-z0-9]{32})$/;

/** An organization with two rw keys, a read-only key, two seeded servers (running) and no volumes. */
const org = (suffix: string) =>
  organization(suffix, {
    api_keys: [
      { name: 'ci', scopes: ['vm:read', 'vm:write'], token: apiToken(suffix, 'rw') },
      { name: 'ro', scopes: ['vm:read'], token: apiToken(suffix, 'ro') },
      { name: 'ci2', scopes: ['vm:write'], token: apiToken(suffix, 'rw2') },
    ],
    servers: [
      { id: `vm_${suffix}web1`, name: 'web-1', region: 'id-jkt', zone: 'id-jkt-a' },
      { id: `vm_${suffix}web2`, name: 'web-2', region: 'id-jkt', zone: 'id-jkt-a' },
    ],
    volumes: [],
  });

/**
 * POST /v1/servers/{id}/console (servers.md "console"): a one-time VNC credential for a running
 * server; the provider keeps hashes only; audited without the credential; sealed replay.
 */
describe('POST /v1/servers/{id}/console', () => {
  let t: TestApp;
  const rw = bearer(apiToken('co', 'rw'));
  const ro = bearer(apiToken('co', 'ro'));
  let keyId: string;
  const consoles = (serverId: string) =>
    t.sql<{ server_id: string; instance_id: string; step: string | null; token_hash: string; password_hash: string; expires_at: Date }>(
      `SELECT server_id, instance_id, step, token_hash, password_hash, expires_at FROM provider_consoles WHERE server_id = $1 ORDER BY created_at`,
      [serverId],
    );
  const audits = (serverId: string) =>
    t.sql(
      `SELECT action, actor_type, actor_id, target_type, target_id, ip_address, data FROM audit_log WHERE target_id = $1 AND action = 'server.console_access' ORDER BY seq`,
      [serverId],
    );

  beforeAll(async () => {
    t = await startTestApp();
    await t.seed({ regions: [region()], organizations: [org('co'), org('cx')] });
    [{ id: keyId }] = await t.sql<{ id: string }>(`SELECT id FROM api_keys WHERE org_id = 'org_co' AND name = 'ci'`);
  });
  afterAll(async () => t?.close());

  it('201 {type, url, password, expires_at}: a wss URL with a one-time token, a 24-character password, now + 60 s; the provider keeps hashes; audited without them', async () => {
    const before = Date.now();
    const res = await t.http.post('/v1/servers/vm_coweb1/console').set(rw);
    const after = Date.now();
    expect(res.status).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({ type: 'vnc', url: expect.stringMatching(URL_PATTERN), password: expect.stringMatching(/^[A-Za-z0-9]{24}$/), expires_at: expect.any(String) });
    const expires = Date.parse(res.body.expires_at);
    expect(expires).toBeGreaterThanOrEqual(before + 60_000 - 1);
    expect(expires).toBeLessThanOrEqual(after + 60_000);
    const [, instanceId, token] = URL_PATTERN.exec(res.body.url)!;
    const [instance] = await t.sql<{ instance_id: string }>(`SELECT instance_id FROM provider_instances WHERE server_id = 'vm_coweb1' AND deleted_at IS NULL`);
    expect(instanceId).toBe(instance.instance_id);
    expect(await consoles('vm_coweb1')).toEqual([
      { server_id: 'vm_coweb1', instance_id: instanceId, step: null, token_hash: sha256(token), password_hash: sha256(res.body.password), expires_at: new Date(res.body.expires_at) },
    ]);
    const audit = await audits('vm_coweb1');
    expect(audit).toEqual([
      { action: 'server.console_access', actor_type: 'api_key', actor_id: keyId, target_type: 'server', target_id: 'vm_coweb1', ip_address: expect.any(String), data: { expires_at: res.body.expires_at } },
    ]);
    const everything = JSON.stringify([await t.sql(`SELECT * FROM audit_log`), await t.sql(`SELECT * FROM provider_consoles`), await t.sql(`SELECT * FROM operations`)]);
    expect(everything).not.toContain(res.body.password);
    expect(everything).not.toContain(token);
    expect(await t.sql(`SELECT count(*)::int AS n FROM operations WHERE vm_id = 'vm_coweb1'`)).toEqual([{ n: 0 }]);
  });

  it('each call makes a new credential; an unfinished operation does not matter, the status does', async () => {
    await t.sql(`INSERT INTO operations (id, org_id, type, status, vm_id, steps) VALUES ('op_coreboot000000000000000', 'org_co', 'vm.renew', 'pending', 'vm_coweb2', '[]')`);
    const a = await t.http.post('/v1/servers/vm_coweb2/console').set(rw);
    const b = await t.http.post('/v1/servers/vm_coweb2/console').set(rw);
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(a.body.password).not.toBe(b.body.password);
    expect(a.body.url).not.toBe(b.body.url);
    expect((await consoles('vm_coweb2')).map((c) => c.password_hash)).toEqual([sha256(a.body.password), sha256(b.body.password)]);
    expect(await audits('vm_coweb2')).toHaveLength(2);
    await t.sql(`UPDATE operations SET status = 'succeeded', result = '{}', finished_at = now() WHERE id = 'op_coreboot000000000000000'`);
  });

  it('404 for another organization\'s server or an unknown one; 409 invalid_state unless running (stopped, deleted, or the instance stopped at the provider); nothing written', async () => {
    for (const id of ['vm_cxweb1', 'vm_nope']) {
      const res = await t.http.post(`/v1/servers/${id}/console`).set(rw);
      expect([res.status, res.body]).toEqual([404, errorBody(res, 'not_found', `Server ${id} not found`)]);
    }
    await t.sql(`UPDATE servers SET status = 'stopped' WHERE id = 'vm_coweb2'`);
    let res = await t.http.post('/v1/servers/vm_coweb2/console').set(rw);
    expect([res.status, res.body]).toEqual([409, errorBody(res, 'invalid_state', 'Server vm_coweb2 is stopped; a console needs it running')]);
    await t.sql(`UPDATE servers SET status = 'running' WHERE id = 'vm_coweb2'`);
    // The service thinks it runs, the provider knows better: its refusal is the answer.
    await t.sql(`UPDATE provider_instances SET power = 'stopped' WHERE server_id = 'vm_coweb2'`);
    res = await t.http.post('/v1/servers/vm_coweb2/console').set(rw);
    expect([res.status, res.body]).toEqual([409, errorBody(res, 'invalid_state', 'The instance of server vm_coweb2 is stopped; a console needs it running')]);
    await t.sql(`UPDATE provider_instances SET power = 'running' WHERE server_id = 'vm_coweb2'`);
    await t.sql(`INSERT INTO servers (id, org_id, name, region_id, zone_id) VALUES ('vm_cogone', 'org_co', 'gone-1', 'id-jkt', 'id-jkt-a')`);
    await t.sql(`UPDATE servers SET deleted_at = now() WHERE id = 'vm_cogone'`);
    res = await t.http.post('/v1/servers/vm_cogone/console').set(rw);
    expect([res.status, res.body]).toEqual([409, errorBody(res, 'invalid_state', 'Server vm_cogone is deleted; a console needs it running')]);
    expect(await audits('vm_cogone')).toEqual([]);
    expect(await consoles('vm_cogone')).toEqual([]);
    expect(await audits('vm_cxweb1')).toEqual([]);
    expect(await audits('vm_coweb2')).toHaveLength(2);
  });

  it('403 for a key without vm:write; 503 provider_unavailable while the compute provider is down, nothing written', async () => {
    let res = await t.http.post('/v1/servers/vm_coweb1/console').set(ro);
    expect([res.status, res.body.error.code]).toEqual([403, 'forbidden']);
    await setComputeProviderDown(t, true);
    try {
      res = await t.http.post('/v1/servers/vm_coweb1/console').set(rw).set('Idempotency-Key', 'co-down-1');
      expect([res.status, res.body]).toEqual([503, errorBody(res, 'provider_unavailable', 'The compute provider is unavailable; no console was made. Retry later')]);
    } finally {
      await setComputeProviderDown(t, false);
    }
    expect(await audits('vm_coweb1')).toHaveLength(1);
    expect(await consoles('vm_coweb1')).toHaveLength(1);
    // Not stored: the same key, the provider back, makes the console.
    res = await t.http.post('/v1/servers/vm_coweb1/console').set(rw).set('Idempotency-Key', 'co-down-1');
    expect(res.status).toBe(201);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
  });

  it('Idempotency-Key: the same caller gets the same credential again (stored sealed), once audited; another caller 409; a stored 409 replays', async () => {
    const first = await t.http.post('/v1/servers/vm_coweb2/console').set(rw).set('Idempotency-Key', 'co-console-1');
    expect(first.status).toBe(201);
    const auditsBefore = (await audits('vm_coweb2')).length;
    const again = await t.http.post('/v1/servers/vm_coweb2/console').set(rw).set('Idempotency-Key', 'co-console-1');
    expect([again.status, again.body, again.headers['idempotent-replayed'], again.headers['cache-control']]).toEqual([201, first.body, 'true', 'no-store']);
    expect(await audits('vm_coweb2')).toHaveLength(auditsBefore);
    const [record] = await t.sql<{ status_code: number; response_body: string }>(`SELECT status_code, response_body FROM idempotency_records WHERE org_id = 'org_co' AND status_code = 201`);
    expect(record.status_code).toBe(201);
    const stored = JSON.stringify(await t.sql(`SELECT * FROM idempotency_records`));
    expect(stored).not.toContain(first.body.password);
    expect(stored).not.toContain(URL_PATTERN.exec(first.body.url)![2]);

    // Another caller of the organization with the same key: a secret replays only to its maker.
    const other = await t.http.post('/v1/servers/vm_coweb2/console').set(bearer(apiToken('co', 'rw2'))).set('Idempotency-Key', 'co-console-1');
    expect([other.status, other.body]).toEqual([
      409,
      errorBody(
        other,
        'idempotency_conflict',
        'This Idempotency-Key was already used with a different request, or by another caller (an answer holding a secret replays only to the caller who made it); use a new key for a new request',
      ),
    ]);

    await t.sql(`UPDATE servers SET status = 'stopped' WHERE id = 'vm_coweb2'`);
    const refused = await t.http.post('/v1/servers/vm_coweb2/console').set(rw).set('Idempotency-Key', 'co-console-2');
    await t.sql(`UPDATE servers SET status = 'running' WHERE id = 'vm_coweb2'`);
    const replayed = await t.http.post('/v1/servers/vm_coweb2/console').set(rw).set('Idempotency-Key', 'co-console-2');
    expect([refused.status, replayed.status, replayed.headers['idempotent-replayed']]).toEqual([409, 409, 'true']);
    expect(replayed.body).toEqual(refused.body);
    // The first key's stored 201 still replays, though the server has been stopped and started since.
    const late = await t.http.post('/v1/servers/vm_coweb2/console').set(rw).set('Idempotency-Key', 'co-console-1');
    expect([late.status, late.body]).toEqual([201, first.body]);
  });
});

/** No log line of a server process at LOG_LEVEL=trace holds the console's password or token. */
describe('POST /v1/servers/{id}/console in the logs', () => {
  let server: ServerProcess;
  let db: TestDatabase;
  const dir = tempDir('cds-console-logs-');

  beforeAll(async () => {
    db = await createTestDatabase();
    const env = { DATABASE_URL: db.url, DATA_DIR: db.url ? undefined : join(dir.path, 'data'), DEMO_SEED: 'false' };
    const seed = join(dir.path, 'seed.json');
    writeFileSync(seed, JSON.stringify({ regions: [region()], organizations: [org('cl')] }));
    const seeded = runCli(['seed', seed], env);
    if (seeded.status !== 0) throw new Error(`seed failed: ${seeded.stderr}`);
    server = await startServerProcess({ ...env, LOG_LEVEL: 'trace', WORKER_ENABLED: 'false' });
  }, scaled(120_000));
  afterAll(async () => {
    await server?.stop();
    await db?.drop();
    dir.remove();
  });

  it('logs the requests, never the credential', async () => {
    const api = await processHttp(server.url);
    const made = await api.post('/v1/servers/vm_clweb1/console').set(bearer(apiToken('cl', 'rw'))).set('Idempotency-Key', 'cl-logs-1');
    const replay = await api.post('/v1/servers/vm_clweb1/console').set(bearer(apiToken('cl', 'rw'))).set('Idempotency-Key', 'cl-logs-1');
    expect([made.status, replay.status, replay.body]).toEqual([201, 201, made.body]);
    await new Promise((r) => setTimeout(r, 300));
    const out = server.output();
    expect(out).toContain(made.headers['x-request-id']);
    expect(out).not.toContain(made.body.password);
    expect(out).not.toContain(URL_PATTERN.exec(made.body.url)![2]);
  });
});
