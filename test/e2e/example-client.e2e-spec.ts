import { IMAGES, SERVER_PLANS, serverRegion } from '../support/servers';
import { execFile, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { OWNER_PASSWORD, organization } from '../support/fixtures';
import { processHttp } from '../support/openapi-validation';
import { ROOT, childEnv, tempDir } from '../support/processes';
import { TestApp, startTestApp } from '../support/test-app';

/**
 * examples/typescript-client: the client generated with @hey-api/openapi-ts from the document the
 * running service serves, type-checked with --strict, then the integrator's script run against
 * the service (log in, list volumes, renew with an Idempotency-Key and retry it, poll, wallet).
 */
describe('example TypeScript client (generated from the served document)', () => {
  let t: TestApp;
  let base: string;
  const dir = tempDir('cds-client-');

  beforeAll(async () => {
    t = await startTestApp({ workerEnabled: true, workerIntervalMs: 50, webhookAllowPrivateUrls: true });
    await t.seed({ server_plans: SERVER_PLANS, images: IMAGES, regions: [serverRegion()], organizations: [organization('ex')] });
    await t.app.listen(0, '127.0.0.1');
    const address = (t.app.getHttpServer() as Server).address();
    base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  afterAll(async () => {
    await t?.close();
    dir.remove();
  });

  const run = (command: string, args: string[], env: Record<string, string> = {}) => {
    const r = spawnSync(command, args, { cwd: ROOT, encoding: 'utf8', env: childEnv({ PATH: process.env.PATH, ...env }), timeout: 120_000 });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  };

  it('generates from /v1/openapi.json, compiles with --strict, and runs the renewal flow', async () => {
    const served = await (await processHttp(base)).get('/v1/openapi.json');
    expect(served.status).toBe(200);
    const input = join(dir.path, 'openapi.json');
    writeFileSync(input, served.text);

    const generate = run(process.execPath, ['node_modules/@hey-api/openapi-ts/bin/run.js', '-f', 'examples/typescript-client/openapi-ts.config.mjs'], { OPENAPI_INPUT: input });
    expect({ status: generate.status, stderr: generate.stderr }).toEqual({ status: 0, stderr: expect.any(String) });
    // The other generator (types only), whose Operation must narrow by `type` as well (src/openapi-typescript-results.ts).
    const types = run(process.execPath, ['node_modules/openapi-typescript/bin/cli.js', input, '-o', 'examples/typescript-client/src/generated/openapi-typescript.ts']);
    expect({ status: types.status, stderr: types.stderr }).toEqual({ status: 0, stderr: expect.any(String) });
    const compile = run(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'examples/typescript-client/tsconfig.json']);
    expect({ status: compile.status, out: compile.stdout }).toEqual({ status: 0, out: '' });

    // Asynchronously: the service answering the script runs in this process.
    const script = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        ['examples/typescript-client/dist/main.js'],
        { cwd: ROOT, env: childEnv({ BASE_URL: base, EMAIL: 'owner@ex.test', PASSWORD: OWNER_PASSWORD, TERM_MONTHS: '3', RECEIVE_WEBHOOKS: '1' }), timeout: 60_000 },
        (err, stdout, stderr) => resolve({ status: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr }),
      );
    });
    expect({ status: script.status, stderr: script.stderr }).toEqual({ status: 0, stderr: '' });
    const steps = script.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const [op] = await t.sql<{ id: string; status: string }>(`SELECT id, status FROM operations WHERE volume_id = 'vol_exdata1'`);
    const [rule] = await t.sql<{ id: string }>(`SELECT id FROM firewall_rules WHERE server_id = 'vm_exweb1'`);
    const [bought] = await t.sql<{ id: string }>(`SELECT id FROM servers WHERE name = 'example-1'`);
    const [disk] = await t.sql<{ id: string }>(`SELECT id FROM volumes WHERE name = 'example-data'`);
    // The example deleted the endpoint it subscribed once it had verified the renewal's end: the
    // endpoint, its delivery and the event (no other endpoint had it) are gone.
    for (const table of ['webhook_endpoints', 'webhook_deliveries', 'webhook_events']) expect({ table, rows: await t.sql(`SELECT id FROM ${table}`) }).toEqual({ table, rows: [] });
    expect(steps).toEqual([
      { step: 'login', user: 'owner@ex.test', organizations: ['org_ex'] },
      { step: 'volumes', volumes: [{ id: 'vol_exdata1', server: 'web-1', expires_at: '2026-12-21T00:00:00.000Z' }] },
      { step: 'renew', status: 202, location: `/v1/operations/${op.id}`, operation: op.id },
      { step: 'renew-retry', status: 202, replayed: 'true', same_operation: true },
      { step: 'operation', id: op.id, status: 'succeeded', expires_at: '2027-03-21T00:00:00.000Z', charged: { currency: 'USD', amount: '6.00000' } },
      { step: 'webhook', type: 'operation.succeeded', webhook_id: expect.stringMatching(/^evt_[A-Za-z0-9]+$/), verified: true, operation: op.id },
      {
        step: 'wallet',
        balances: [
          { currency: 'USD', available: '94.00000', reserved: '0.00000' },
          { currency: 'IDR', available: '1500000', reserved: '0' },
        ],
      },
      { step: 'ssh-key', id: expect.stringMatching(/^ssh_/), fingerprint: 'SHA256:mKqU+0K8OhKmA8bBQi9Rz0Q5l7/g160hIP+rJYSTNj4' },
      { step: 'firewall-rule', id: rule.id, port: '22', sources: ['203.0.113.0/24'] },
      { step: 'firewall', inbound_default: 'deny', rules: [rule.id], verdict: { allowed: true, rule_id: rule.id } },
      { step: 'server', id: bought.id, plan: 'cx1', image: 'debian-12', operation: 'succeeded', ipv4: expect.stringMatching(/^\d+\.\d+\.\d+\.\d+$/), charged: { currency: 'USD', amount: '4.50000' } },
      { step: 'disk', id: disk.id, operation: 'succeeded', server: bought.id },
      { step: 'server-deleted', operation: 'succeeded', detached_volume_ids: [disk.id] },
      { step: 'disk-deleted', operation: 'succeeded' },
    ]);
    // Left behind: the server and its disk deleted; the wallet charged the renewal (6.00000), the server (4.50000) and the disk
    // (10 GB × 0.02000 = 0.20000) once each, nothing refunded.
    expect(await t.sql(`SELECT status, ipv4 FROM servers WHERE id = $1`, [bought.id])).toEqual([{ status: 'deleted', ipv4: null }]);
    expect(await t.sql(`SELECT status, server_id FROM volumes WHERE id = $1`, [disk.id])).toEqual([{ status: 'deleted', server_id: null }]);
    expect(await t.sql(`SELECT available::text AS available, reserved::text AS reserved FROM wallet_balances WHERE org_id = 'org_ex' AND currency = 'USD'`)).toEqual([
      { available: '8930000', reserved: '0' },
    ]);
    // What it left behind: one renewal (the retry replayed), succeeded; the volume renewed; charged once. Then the server's
    // purchase and deletion and the disk's purchase and deletion, one operation each.
    expect(await t.sql(`SELECT type, status, count(*)::int AS n FROM operations GROUP BY 1, 2 ORDER BY 1`)).toEqual([
      { type: 'vm.create', status: 'succeeded', n: 1 },
      { type: 'vm.delete', status: 'succeeded', n: 1 },
      { type: 'volume.create', status: 'succeeded', n: 1 },
      { type: 'volume.delete', status: 'succeeded', n: 1 },
      { type: 'volume.renew', status: 'succeeded', n: 1 },
    ]);
    expect(op.status).toBe('succeeded');
    const [volume] = await t.sql<{ expires_at: Date }>(`SELECT expires_at FROM volumes WHERE id = 'vol_exdata1'`);
    expect(new Date(volume.expires_at).toISOString()).toBe('2027-03-21T00:00:00.000Z');
  }, 300_000);
});
