import { AdvanceOperations } from '../../src/modules/operations/application/advance-operations.use-case';
import { usingPostgres } from '../support/database';
import { apiToken, bearer, organization, region } from '../support/fixtures';
import { testTemplates } from '../support/templates';
import { TestApp, startTestApp } from '../support/test-app';

const describeOnPostgres = usingPostgres() ? describe : describe.skip;
if (!usingPostgres()) {
  console.log('templates-concurrency.e2e-spec: skipped, needs DATABASE_URL (PostgreSQL); the embedded engine serialises transactions');
}

/** Deployment acceptance under concurrency (PostgreSQL): the server's lock and the unique indexes decide. */
describeOnPostgres('deployments under concurrency (PostgreSQL)', () => {
  let t: TestApp;
  const rw = bearer(apiToken('tc', 'rw'));

  beforeAll(async () => {
    t = await startTestApp();
    await t.seed({
      templates: testTemplates(),
      regions: [region()],
      organizations: [
        {
          ...organization('tc'),
          servers: [
            { id: 'vm_tcweb1', name: 'web-1', region: 'id-jkt', zone: 'id-jkt-a' },
            { id: 'vm_tcweb2', name: 'web-2', region: 'id-jkt', zone: 'id-jkt-a' },
          ],
          volumes: [],
        },
      ],
    });
  });
  afterAll(async () => t?.close());

  const deploy = (serverId: string, body: object) => t.http.post(`/v1/servers/${serverId}/deployments`).set(rw).send(body);

  it('8 concurrent deploys of the same template on one server: exactly one accepted, the others 409 naming it', async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, () => deploy('vm_tcweb1', { template: 'postgres', variables: { password: 'pw' } })));
    const accepted = answers.filter((r) => r.status === 202);
    expect(accepted).toHaveLength(1);
    const opId = accepted[0].body.operation.id;
    const depId = accepted[0].body.deployment.id;
    for (const r of answers.filter((a) => a.status !== 202)) {
      expect(r.status).toBe(409);
      // Refused while the winner's operation is unfinished (named), or once it ended, as the template on the server.
      expect([
        { code: 'invalid_state', details: { operation_id: opId } },
        { code: 'conflict', details: { existing_id: depId } },
      ]).toContainEqual({ code: r.body.error.code, details: r.body.error.details });
    }
    expect(await t.sql(`SELECT count(*)::int AS n FROM deployments WHERE server_id = 'vm_tcweb1'`)).toEqual([{ n: 1 }]);
    expect(await t.sql(`SELECT count(*)::int AS n FROM operations WHERE vm_id = 'vm_tcweb1'`)).toEqual([{ n: 1 }]);
    expect(await t.sql(`SELECT count(*)::int AS n FROM audit_log WHERE action = 'deployment.create'`)).toEqual([{ n: 1 }]);
    await t.app.get(AdvanceOperations).runUntilIdle();
    expect((await t.http.get(`/v1/deployments/${depId}`).set(rw)).body.status).toBe('active');
  });

  it('8 concurrent deploys of different templates on one server: one accepted (one unfinished operation per server)', async () => {
    const templates = ['postgres', 'wordpress', 'sick', 'broken'];
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => deploy('vm_tcweb2', { template: templates[i % 4], variables: templates[i % 4] === 'postgres' ? { password: 'p' } : templates[i % 4] === 'wordpress' ? { admin_email: 'a', admin_password: 'b' } : {} })),
    );
    expect(answers.filter((r) => r.status === 202)).toHaveLength(1);
    expect(answers.filter((r) => r.status === 409).every((r) => r.body.error.code === 'invalid_state' || r.body.error.code === 'conflict')).toBe(true);
    expect(await t.sql(`SELECT count(*)::int AS n FROM operations WHERE vm_id = 'vm_tcweb2' AND status IN ('pending', 'running')`)).toEqual([{ n: 1 }]);
    expect(await t.sql(`SELECT count(*)::int AS n FROM deployments WHERE server_id = 'vm_tcweb2'`)).toEqual([{ n: 1 }]);
  });
});
