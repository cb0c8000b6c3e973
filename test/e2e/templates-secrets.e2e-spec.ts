import { scaled } from '../support/deadlines';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AdvanceOperations } from '../../src/modules/operations/application/advance-operations.use-case';
import { DeploymentSecrets } from '../../src/modules/templates/application/deployment-secrets';
import { FixedClock } from '../../src/shared/kernel/clock/clock';
import { createTestDatabase, TestDatabase } from '../support/database';
import { apiToken, bearer, organization, region } from '../support/fixtures';
import { callProcess } from '../support/process-http';
import { ServerProcess, runCli, startServerProcess, tempDir } from '../support/processes';
import { testTemplates } from '../support/templates';
import { TestApp, startTestApp } from '../support/test-app';

/**
 * A deployment's secret variables (servers.md): set in a test, then searched for everywhere the
 * service writes. In the database (every table, dumped row by row as text) they are found only
 * in the sealed columns of their deployment (which open to them); in the answers, the operations,
 * the audit log, the stored idempotent answers and the provider's apps never; and in the logs of a
 * server process at LOG_LEVEL=debug never either.
 */
const SECRET_1 = 'Sup3r-Secret-Deploy-Value-7f3a';
const SECRET_2 = 'An0ther-Secret-Update-Value-91bc';
const SECRET_3 = 'Th1rd-Secret-Failing-Update-c4d2';

describe('secret variables are found only in their sealed column', () => {
  let t: TestApp;
  const rw = bearer(apiToken('ts', 'rw'));

  beforeAll(async () => {
    t = await startTestApp({ deploymentSecretsKey: 'a-deployment-secrets-key-of-at-least-32-chars' }, new FixedClock(new Date('2026-11-23T10:00:00.000Z')));
    await t.seed({ templates: testTemplates(), regions: [region()], organizations: [{ ...organization('ts'), volumes: [] }] });
  });
  afterAll(async () => t?.close());

  it('deploy, update (merging), a failing update, health, remove: no table holds a secret in clear; the sealed columns open to them', async () => {
    const advance = t.app.get(AdvanceOperations);
    const answers: string[] = [];
    const call = async (req: Promise<{ status: number; text: string; body: { operation?: { id: string }; deployment?: { id: string } } }>) => {
      const res = await req;
      answers.push(res.text);
      return res;
    };
    const dep = await call(
      t.http.post('/v1/servers/vm_tsweb1/deployments').set({ ...rw, 'Idempotency-Key': 'secret-deploy' }).send({ template: 'wordpress', variables: { admin_email: 'a@ts.test', admin_password: SECRET_1 } }),
    );
    expect(dep.status).toBe(202);
    const id = dep.body.deployment!.id;
    await advance.runUntilIdle();
    expect((await call(t.http.post(`/v1/deployments/${id}/update`).set(rw).send({ variables: { admin_password: SECRET_2 } }))).status).toBe(202);
    await advance.runUntilIdle();
    await t.sql(`UPDATE templates SET simulate = '{"deploy": "fail", "health": "healthy"}' WHERE id = 'wordpress'`);
    expect((await call(t.http.post(`/v1/deployments/${id}/update`).set(rw).send({ variables: { admin_password: SECRET_3 } }))).status).toBe(202);
    await advance.runUntilIdle();
    await t.sql(`UPDATE templates SET simulate = NULL WHERE id = 'wordpress'`);
    // Secrets sent where they are refused: never echoed.
    const refused = await call(t.http.post(`/v1/deployments/${id}/update`).set(rw).send({ variables: { admin_password: SECRET_1, nope: SECRET_2 } }));
    expect(refused.status).toBe(400);
    expect((await call(t.http.post(`/v1/deployments/${id}/update`).set(rw).send({}))).status).toBe(202);
    await advance.runUntilIdle();
    expect((await call(t.http.post(`/v1/deployments/${id}/health`).set(rw))).status).toBe(202);
    await advance.runUntilIdle();
    answers.push((await t.http.get(`/v1/deployments/${id}`).set(rw)).text);
    answers.push((await t.http.get(`/v1/operations?deployment_id=${id}`).set(rw)).text);
    answers.push((await t.http.get('/v1/audit-log').set(rw)).text);

    // The deployment ended active with the second secret (the third one's update failed).
    const deployment = (await t.sql<{ status: string; secrets_sealed: string; pending_secrets_sealed: string | null }>(
      `SELECT status, secrets_sealed, pending_secrets_sealed FROM deployments WHERE id = $1`,
      [id],
    ))[0];
    expect(deployment.status).toBe('active');
    expect(t.app.get(DeploymentSecrets).open(id, deployment.secrets_sealed)).toEqual({ admin_password: SECRET_2 });
    expect(deployment.pending_secrets_sealed).toBeNull();
    for (const answer of answers) for (const secret of [SECRET_1, SECRET_2, SECRET_3]) expect(answer).not.toContain(secret);

    // Every table, every row, as text.
    const tables = (await t.sql<{ name: string }>(`SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`)).map((r) => r.name);
    expect(tables).toEqual(expect.arrayContaining(['deployments', 'operations', 'audit_log', 'idempotency_records', 'provider_apps', 'provider_app_calls']));
    const found: string[] = [];
    for (const table of tables) {
      const rows = await t.sql<{ row: string }>(`SELECT t::text AS row FROM "${table}" t`);
      for (const { row } of rows) for (const secret of [SECRET_1, SECRET_2, SECRET_3]) if (row.includes(secret)) found.push(`${table}: ${secret}`);
    }
    expect(found).toEqual([]);
    // The operations and the audit entries hold no secret, even encrypted: only the deployment's row does.
    expect(await t.sql(`SELECT count(*)::int AS n FROM operations WHERE params::text LIKE '%sealed%' OR result::text LIKE '%sealed%'`)).toEqual([{ n: 0 }]);
    expect(await t.sql(`SELECT count(*)::int AS n FROM audit_log WHERE data::text LIKE '%sealed%'`)).toEqual([{ n: 0 }]);
    expect(await t.sql(`SELECT variable_names FROM provider_apps WHERE deployment_id = $1`, [id])).toEqual([{ variable_names: ['admin_email', 'admin_password'] }]);
  });
});

describe('secret variables never reach the logs (server process, LOG_LEVEL=debug, worker on)', () => {
  let db: TestDatabase;
  let dir: ReturnType<typeof tempDir>;
  let server: ServerProcess;
  const token = apiToken('tl', 'rw');

  beforeAll(async () => {
    db = await createTestDatabase();
    dir = tempDir('cds-template-secrets-');
    const env = db.url ? { DATABASE_URL: db.url } : { DATA_DIR: join(dir.path, 'data') };
    const seedFile = join(dir.path, 'seed.json');
    writeFileSync(seedFile, JSON.stringify({ templates: testTemplates(), regions: [region()], organizations: [{ ...organization('tl'), volumes: [] }] }));
    const seeded = runCli(['seed', seedFile], env);
    if (seeded.status !== 0) throw new Error(`seed failed: ${seeded.stderr}`);
    server = await startServerProcess({ ...env, DEMO_SEED: 'false', LOG_LEVEL: 'debug', WORKER_ENABLED: 'true' }, 60000);
  }, scaled(120000));
  afterAll(async () => {
    await server?.stop();
    dir?.remove();
    await db?.drop();
  });

  it('deploy, update, a failed deploy and a refused body: the output holds none of the secrets', async () => {
    const wait = async (opId: string) => {
      const res = await callProcess(server, 'GET', `/v1/operations/${opId}?wait=30`, { token });
      expect(['succeeded', 'failed']).toContain(res.body.status);
      return res.body;
    };
    const dep = await callProcess(server, 'POST', '/v1/servers/vm_tlweb1/deployments', {
      token,
      idempotencyKey: 'logs-deploy',
      body: { template: 'postgres', variables: { password: SECRET_1, database: 'app' } },
    });
    expect(dep.status).toBe(202);
    expect((await wait(dep.body.operation.id)).status).toBe('succeeded');
    const upd = await callProcess(server, 'POST', `/v1/deployments/${dep.body.deployment.id}/update`, { token, body: { version: '16', variables: { password: SECRET_2 } } });
    expect(upd.status).toBe(202);
    expect((await wait(upd.body.operation.id)).result).toEqual({ deployment_id: dep.body.deployment.id, version: '16', status: 'active' });
    const broken = await callProcess(server, 'POST', '/v1/servers/vm_tlweb1/deployments', { token, body: { template: 'broken' } });
    expect((await wait(broken.body.operation.id)).status).toBe('failed');
    const refused = await callProcess(server, 'POST', '/v1/servers/vm_tlweb1/deployments', { token, body: { template: 'wordpress', variables: { admin_email: 'x', admin_password: SECRET_3, extra: SECRET_3 } } });
    expect(refused.status).toBe(400);
    await server.stop();
    const output = server.output();
    // The requests were logged (the update's path names the deployment).
    expect(output).toContain('"path":"/v1/servers/vm_tlweb1/deployments"');
    expect(output).toContain(`"path":"/v1/deployments/${dep.body.deployment.id}/update"`);
    for (const secret of [SECRET_1, SECRET_2, SECRET_3]) expect(output).not.toContain(secret);
  });
});
