import { AdvanceOperations } from '../../src/modules/operations/application/advance-operations.use-case';
import { DeploymentSecrets } from '../../src/modules/templates/application/deployment-secrets';
import { TemplateDeployments } from '../../src/modules/templates/application/deployments.port';
import { UnitOfWork } from '../../src/shared/database/unit-of-work';
import { Db } from '../../src/shared/database/transaction';
import { FixedClock, SystemClock } from '../../src/shared/kernel/clock/clock';
import { TemplateApps } from '../../src/modules/templates/application/template-apps.port';
import { ComputeProvider } from '../../src/modules/servers/application/compute-provider.port';
import { VerifyInvariants } from '../../src/modules/verification/application/verify-invariants.use-case';
import { TypeOrmInvariantChecks } from '../../src/modules/verification/infrastructure/typeorm-invariant-checks';
import { BlockStorage } from '../../src/modules/storage-provider/application/block-storage.port';
import { expectVerified } from '../support/verify';
import { errorBody } from '../support/assertions';
import { OWNER_PASSWORD, apiToken, bearer, organization, region } from '../support/fixtures';
import { setAppsDown, testTemplates } from '../support/templates';
import { setComputeProviderDown } from '../support/provider';
import { TestApp, startTestApp } from '../support/test-app';

const NOW = '2026-11-23T10:00:00.000Z';

/**
 * Templates and deployments (servers.md "Templates and deployments"): GET /v1/templates, deploy,
 * list and read, update, health, remove; the template.* operations run by the worker with their
 * steps and results, the provider's apps, secrets sealed and "[redacted]", every 400/404/409 with
 * its envelope, Idempotency-Key replays, 503 while the provider is down, and a deleted server's
 * deployments removed.
 */
describe('templates and deployments', () => {
  let t: TestApp;
  let advance: AdvanceOperations;
  const clock = new FixedClock(new Date(NOW));
  const rw = bearer(apiToken('tp', 'rw'));
  const ro = bearer(apiToken('tp', 'ro'));
  const other = bearer(apiToken('tx', 'rw'));
  let viewer: { Authorization: string };
  let developer: { Authorization: string };

  beforeAll(async () => {
    t = await startTestApp({}, clock);
    advance = t.app.get(AdvanceOperations);
    const base = organization('tp');
    const result = await t.seed({
      templates: testTemplates(),
      regions: [region('id-jkt')],
      organizations: [
        {
          ...base,
          members: [
            { email: 'owner@tp.test', password: OWNER_PASSWORD, role: 'owner' },
            { email: 'viewer@tp.test', password: OWNER_PASSWORD, role: 'viewer' },
            { email: 'dev@tp.test', password: OWNER_PASSWORD, role: 'developer' },
          ],
          api_keys: [...base.api_keys, { name: 'ro', scopes: ['vm:read'], token: apiToken('tp', 'ro') }],
          servers: [
            ...base.servers,
            { id: 'vm_tpweb2', name: 'web-2', region: 'id-jkt', zone: 'id-jkt-a' },
            { id: 'vm_tpweb3', name: 'web-3', region: 'id-jkt', zone: 'id-jkt-a' },
            { id: 'vm_tpstop', name: 'stopped-1', region: 'id-jkt', zone: 'id-jkt-a' },
            { id: 'vm_tpgone', name: 'gone-1', region: 'id-jkt', zone: 'id-jkt-a' },
            { id: 'vm_tpfull', name: 'full-1', region: 'id-jkt', zone: 'id-jkt-a' },
            { id: 'vm_tpdel', name: 'doomed-1', region: 'id-jkt', zone: 'id-jkt-a' },
          ],
          volumes: [],
        },
        { ...organization('tx'), volumes: [] },
      ],
    });
    expect(result.templates).toEqual(['wordpress', 'postgres', 'broken', 'sick']);
    await t.sql(`UPDATE servers SET status = 'stopped' WHERE id = 'vm_tpstop'`);
    await t.sql(`UPDATE servers SET status = 'deleted', deleted_at = now() WHERE id = 'vm_tpgone'`);
    // What the compute provider holds of them (its instances follow the servers).
    await t.sql(`UPDATE provider_instances SET power = 'stopped' WHERE server_id = 'vm_tpstop'`);
    await t.sql(`UPDATE provider_instances SET deleted_at = now() WHERE server_id = 'vm_tpgone'`);
    const login = async (email: string) => bearer((await t.http.post('/v1/auth/login').send({ email, password: OWNER_PASSWORD })).body.token);
    viewer = await login('viewer@tp.test');
    developer = await login('dev@tp.test');
  });
  afterAll(async () => t?.close());

  const deploy = (serverId: string, body: object, headers: Record<string, string> = rw) => t.http.post(`/v1/servers/${serverId}/deployments`).set(headers).send(body);
  const update = (id: string, body?: object, headers: Record<string, string> = rw) => {
    const req = t.http.post(`/v1/deployments/${id}/update`).set(headers);
    return body === undefined ? req : req.send(body);
  };
  const health = (id: string, headers: Record<string, string> = rw) => t.http.post(`/v1/deployments/${id}/health`).set(headers);
  const remove = (id: string, headers: Record<string, string> = rw) => t.http.delete(`/v1/deployments/${id}`).set(headers);
  const getDeployment = (id: string) => t.http.get(`/v1/deployments/${id}`).set(rw);
  const getOperation = async (id: string) => (await t.http.get(`/v1/operations/${id}`).set(rw)).body;
  const row = async (id: string) =>
    (
      await t.sql(
        `SELECT status, version, health, variables, secrets_sealed, pending_version, pending_variables, pending_secrets_sealed, removed_at FROM deployments WHERE id = $1`,
        [id],
      )
    )[0];
  const app = async (id: string) =>
    (await t.sql(`SELECT server_id, template_id, version, state, variable_names, removed_at FROM provider_apps WHERE deployment_id = $1`, [id]))[0];
  const auditOf = (id: string) => t.sql(`SELECT action, actor_type, target_type, data FROM audit_log WHERE target_id = $1 ORDER BY seq`, [id]);
  const secretsOf = async (id: string, column: 'secrets_sealed' | 'pending_secrets_sealed' = 'secrets_sealed') =>
    t.app.get(DeploymentSecrets).open(id, (await row(id))[column] as string | null);

  const deploymentBody = (over: Record<string, unknown>) => ({
    id: expect.stringMatching(/^dep_[A-Za-z0-9]+$/),
    server_id: 'vm_tpweb1',
    template: 'wordpress',
    version: '6.6',
    status: 'deploying',
    health: 'unknown',
    health_checked_at: null,
    variables: {},
    created_at: NOW,
    ...over,
  });
  const pendingOperation = (type: string, deploymentId: string, vmId: string, steps: string[]) => ({
    id: expect.stringMatching(/^op_/),
    type,
    status: 'pending',
    vm_id: vmId,
    deployment_id: deploymentId,
    steps: steps.map((name) => ({ name, status: 'pending' })),
    result: null,
    error: null,
    created_at: NOW,
    finished_at: null,
  });
  const succeeded = (op: Record<string, unknown>, result: object) => ({
    ...op,
    status: 'succeeded',
    steps: (op.steps as { name: string }[]).map((s) => ({ name: s.name, status: 'succeeded' })),
    result,
    finished_at: NOW,
  });

  it('GET /v1/templates: every template by id with versions and variables, never `simulate`; vm:read, any member', async () => {
    const res = await t.http.get('/v1/templates').set(ro);
    expect(res.status).toBe(200);
    const byId = testTemplates()
      .map(({ id, name, versions, variables }) => ({ id, name, versions, variables }))
      .sort((a, b) => (a.id < b.id ? -1 : 1));
    expect(res.body).toEqual({ templates: byId });
    expect(res.body.templates.map((x: { id: string }) => x.id)).toEqual(['broken', 'postgres', 'sick', 'wordpress']);
    expect((await t.http.get('/v1/templates').set(viewer)).body).toEqual(res.body);
    expect((await t.http.get('/v1/templates')).status).toBe(401);
    // A template id that exists: conflict, nothing written (the seed is one transaction); versions or variables listed twice: 400.
    await expect(t.seed({ templates: [{ id: 'zz-new', name: 'New', versions: ['1'], variables: [] }, testTemplates()[0]], regions: [], organizations: [] })).rejects.toMatchObject({
      code: 'conflict',
      message: 'Template wordpress exists already',
    });
    await expect(t.seed({ templates: [{ id: 'zz-dup', name: 'Dup', versions: ['1', '1'], variables: [] }], regions: [], organizations: [] })).rejects.toMatchObject({
      code: 'invalid_request',
      details: { field: 'templates[0].versions' },
    });
    const twice = { name: 'a', description: 'a', required: false, secret: false };
    await expect(t.seed({ templates: [{ id: 'zz-dup', name: 'Dup', versions: ['1'], variables: [twice, twice] }], regions: [], organizations: [] })).rejects.toMatchObject({
      code: 'invalid_request',
      details: { field: 'templates[0].variables' },
    });
    expect((await t.http.get('/v1/templates').set(ro)).body).toEqual(res.body);
  });

  describe('the life of a deployment', () => {
    let depId: string;
    let deployOp: Record<string, unknown>;

    it('deploy → 202 {deployment, operation} + Location; the row deploying with its secret sealed; operation template.deploy; audit deployment.create', async () => {
      const res = await deploy('vm_tpweb1', { template: 'wordpress', variables: { admin_email: 'ops@tp.test', admin_password: 'hunter2-secret-wp' } });
      expect(res.status).toBe(202);
      depId = res.body.deployment.id;
      expect(res.headers.location).toBe(`/v1/operations/${res.body.operation.id}`);
      expect(res.body).toEqual({
        deployment: deploymentBody({ id: depId, variables: { admin_email: 'ops@tp.test', admin_password: '[redacted]' } }),
        operation: pendingOperation('template.deploy', depId, 'vm_tpweb1', ['installing', 'configuring', 'starting_app']),
      });
      deployOp = res.body.operation;
      const stored = await row(depId);
      expect(stored).toEqual({
        status: 'deploying', version: '6.6', health: 'unknown', variables: { admin_email: 'ops@tp.test', admin_password: '[redacted]' },
        secrets_sealed: expect.stringMatching(/^sealed:v1:/), pending_version: null, pending_variables: null, pending_secrets_sealed: null, removed_at: null,
      });
      expect(await secretsOf(depId)).toEqual({ admin_password: 'hunter2-secret-wp' });
      expect(await t.sql(`SELECT type, status, vm_id, volume_id, deployment_id, params FROM operations WHERE deployment_id = $1`, [depId])).toEqual([
        { type: 'template.deploy', status: 'pending', vm_id: 'vm_tpweb1', volume_id: null, deployment_id: depId, params: { template: 'wordpress', version: '6.6' } },
      ]);
      expect(await auditOf(depId)).toEqual([
        {
          action: 'deployment.create', actor_type: 'api_key', target_type: 'deployment',
          data: { operation_id: deployOp.id, server_id: 'vm_tpweb1', template: 'wordpress', version: '6.6', variables: { admin_email: 'ops@tp.test', admin_password: '[redacted]' } },
        },
      ]);
      // GET /v1/operations?deployment_id= finds it.
      const listed = await t.http.get(`/v1/operations?deployment_id=${depId}`).set(rw);
      expect(listed.body).toEqual({ operations: [deployOp], next_cursor: null });
    });

    it('a second action on the server while the deploy is unfinished: 409 invalid_state naming the operation', async () => {
      const busy = await deploy('vm_tpweb1', { template: 'postgres', variables: { password: 'pw-x' } });
      expect(busy.status).toBe(409);
      expect(busy.body).toEqual(
        errorBody(busy, 'invalid_state', `Server vm_tpweb1 already has an operation pending or running (${deployOp.id}); wait for it to end`, { operation_id: deployOp.id }),
      );
      const removing = await remove(depId);
      expect(removing.status).toBe(409);
      expect(removing.body.error.details).toEqual({ operation_id: deployOp.id });
    });

    it('the worker runs installing, configuring, starting_app → active; result {deployment_id, template, version, status}; the app runs at the provider', async () => {
      expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1, failed: 0 });
      expect(await getOperation(deployOp.id as string)).toEqual(succeeded(deployOp, { deployment_id: depId, template: 'wordpress', version: '6.6', status: 'active' }));
      const got = await getDeployment(depId);
      expect(got.status).toBe(200);
      expect(got.body).toEqual(deploymentBody({ id: depId, status: 'active', variables: { admin_email: 'ops@tp.test', admin_password: '[redacted]' } }));
      expect(await app(depId)).toEqual({
        server_id: 'vm_tpweb1', template_id: 'wordpress', version: '6.6', state: 'running', variable_names: ['admin_email', 'admin_password'], removed_at: null,
      });
    });

    it('the template is on the server: 409 conflict naming it', async () => {
      const res = await deploy('vm_tpweb1', { template: 'wordpress', variables: { admin_email: 'a@b.c', admin_password: 'x' } });
      expect(res.status).toBe(409);
      expect(res.body).toEqual(errorBody(res, 'conflict', `Template wordpress is on server vm_tpweb1 already (${depId})`, { existing_id: depId }));
    });

    it('health → template.health (checking): healthy, health_checked_at; not audited', async () => {
      const res = await health(depId);
      expect(res.status).toBe(202);
      expect(res.body).toEqual({
        deployment: deploymentBody({ id: depId, status: 'active', variables: { admin_email: 'ops@tp.test', admin_password: '[redacted]' } }),
        operation: pendingOperation('template.health', depId, 'vm_tpweb1', ['checking']),
      });
      await advance.runUntilIdle();
      expect(await getOperation(res.body.operation.id)).toEqual(succeeded(res.body.operation, { deployment_id: depId, health: 'healthy', checked_at: NOW }));
      expect((await getDeployment(depId)).body).toMatchObject({ status: 'active', health: 'healthy', health_checked_at: NOW });
      expect((await auditOf(depId)).map((a) => a.action)).toEqual(['deployment.create']);
    });

    it('update {variables} merges: the secret not sent is kept; health unknown; audit names what changed; result {deployment_id, version, status}', async () => {
      const res = await update(depId, { version: '6.5', variables: { admin_email: 'web@tp.test' } });
      expect(res.status).toBe(202);
      expect(res.body).toEqual({
        deployment: deploymentBody({ id: depId, status: 'updating', variables: { admin_email: 'ops@tp.test', admin_password: '[redacted]' } }),
        operation: pendingOperation('template.update', depId, 'vm_tpweb1', ['stopping_app', 'installing', 'configuring', 'starting_app']),
      });
      expect(await row(depId)).toMatchObject({ status: 'updating', health: 'unknown', version: '6.6', pending_version: '6.5', pending_variables: { admin_email: 'web@tp.test', admin_password: '[redacted]' } });
      expect(await secretsOf(depId, 'pending_secrets_sealed')).toEqual({ admin_password: 'hunter2-secret-wp' });
      expect((await auditOf(depId))[1]).toEqual({
        action: 'deployment.update', actor_type: 'api_key', target_type: 'deployment',
        data: { operation_id: res.body.operation.id, server_id: 'vm_tpweb1', version: { old: '6.6', new: '6.5' }, variables: { admin_email: { old: 'ops@tp.test', new: 'web@tp.test' } } },
      });
      await advance.runUntilIdle();
      expect(await getOperation(res.body.operation.id)).toEqual(succeeded(res.body.operation, { deployment_id: depId, version: '6.5', status: 'active' }));
      expect((await getDeployment(depId)).body).toEqual(
        deploymentBody({ id: depId, status: 'active', version: '6.5', variables: { admin_email: 'web@tp.test', admin_password: '[redacted]' } }),
      );
      expect(await secretsOf(depId)).toEqual({ admin_password: 'hunter2-secret-wp' });
      expect(await row(depId)).toMatchObject({ pending_version: null, pending_variables: null, pending_secrets_sealed: null });
      expect(await app(depId)).toMatchObject({ version: '6.5', state: 'running', variable_names: ['admin_email', 'admin_password'] });
    });

    it('a failed update → failed, the old version and variables kept; an empty body retries it → active', async () => {
      await t.sql(`UPDATE templates SET simulate = '{"deploy": "fail", "health": "healthy"}' WHERE id = 'wordpress'`);
      const res = await update(depId, { version: '6.6', variables: { admin_password: 'new-secret-wp-2' } });
      expect(res.status).toBe(202);
      await advance.runUntilIdle();
      const op = await getOperation(res.body.operation.id);
      expect(op).toEqual({
        ...res.body.operation,
        status: 'failed',
        steps: [
          { name: 'stopping_app', status: 'succeeded' },
          { name: 'installing', status: 'failed' },
          { name: 'configuring', status: 'pending' },
          { name: 'starting_app', status: 'pending' },
        ],
        error: { code: 'internal', message: 'Template wordpress 6.6 failed to install' },
        finished_at: NOW,
      });
      expect((await getDeployment(depId)).body).toEqual(
        deploymentBody({ id: depId, status: 'failed', version: '6.5', variables: { admin_email: 'web@tp.test', admin_password: '[redacted]' } }),
      );
      expect(await secretsOf(depId)).toEqual({ admin_password: 'hunter2-secret-wp' });
      expect(await row(depId)).toMatchObject({ pending_version: null, pending_variables: null, pending_secrets_sealed: null });
      // health on a failed deployment: 409.
      const h = await health(depId);
      expect(h.status).toBe(409);
      expect(h.body).toEqual(errorBody(h, 'invalid_state', `Deployment ${depId} is failed; a health check needs it active`));

      await t.sql(`UPDATE templates SET simulate = NULL WHERE id = 'wordpress'`);
      const retry = await update(depId);
      expect(retry.status).toBe(202);
      expect(retry.body.deployment.status).toBe('updating');
      await advance.runUntilIdle();
      expect((await getOperation(retry.body.operation.id)).result).toEqual({ deployment_id: depId, version: '6.5', status: 'active' });
      expect((await getDeployment(depId)).body).toMatchObject({ status: 'active', version: '6.5', health: 'unknown', health_checked_at: null });
      expect(await app(depId)).toMatchObject({ version: '6.5', state: 'running' });
    });

    it('null unsets an optional variable; a required one cannot be unset (400)', async () => {
      const pg = await deploy('vm_tpweb1', { template: 'postgres', version: '15', variables: { password: 'pg-secret-1', database: 'app' } });
      expect(pg.status).toBe(202);
      expect(pg.body.deployment.variables).toEqual({ database: 'app', password: '[redacted]' });
      await advance.runUntilIdle();
      const required = await update(pg.body.deployment.id, { variables: { password: null } });
      expect(required.status).toBe(400);
      expect(required.body).toEqual(errorBody(required, 'invalid_request', 'variables: password is required and cannot be unset', { field: 'variables.password' }));
      const unset = await update(pg.body.deployment.id, { variables: { database: null } });
      expect(unset.status).toBe(202);
      await advance.runUntilIdle();
      expect((await getDeployment(pg.body.deployment.id)).body).toMatchObject({ status: 'active', version: '15', variables: { password: '[redacted]' } });
      expect(await secretsOf(pg.body.deployment.id)).toEqual({ password: 'pg-secret-1' });
    });

    it('remove → removing at once, then removed (readable, out of the default list); audit deployment.remove; the app gone', async () => {
      const res = await remove(depId);
      expect(res.status).toBe(202);
      expect(res.body).toEqual({
        deployment: deploymentBody({ id: depId, status: 'removing', version: '6.5', variables: { admin_email: 'web@tp.test', admin_password: '[redacted]' } }),
        operation: pendingOperation('template.remove', depId, 'vm_tpweb1', ['stopping_app', 'uninstalling']),
      });
      await advance.runUntilIdle();
      expect(await getOperation(res.body.operation.id)).toEqual(succeeded(res.body.operation, { deployment_id: depId, status: 'removed' }));
      expect((await getDeployment(depId)).body).toEqual(
        deploymentBody({ id: depId, status: 'removed', version: '6.5', variables: { admin_email: 'web@tp.test', admin_password: '[redacted]' } }),
      );
      expect(await app(depId)).toMatchObject({ removed_at: expect.any(Date) });
      expect((await auditOf(depId)).map((a) => a.action)).toEqual(['deployment.create', 'deployment.update', 'deployment.update', 'deployment.update', 'deployment.remove']);
      const list = await t.http.get('/v1/deployments?server_id=vm_tpweb1').set(rw);
      expect(list.body.deployments.map((d: { id: string }) => d.id)).not.toContain(depId);
      const removed = await t.http.get('/v1/deployments?status=removed').set(rw);
      expect(removed.body).toEqual({ deployments: [(await getDeployment(depId)).body], next_cursor: null });
      const again = await remove(depId);
      expect(again.status).toBe(409);
      expect(again.body).toEqual(errorBody(again, 'invalid_state', `Deployment ${depId} is removed; a removal needs it active or failed`));
      // Once removed, the template may be deployed on the server again.
      const redeploy = await deploy('vm_tpweb1', { template: 'wordpress', variables: { admin_email: 'a@tp.test', admin_password: 'pw-again' } });
      expect(redeploy.status).toBe(202);
      await advance.runUntilIdle();
    });
  });

  it('simulate.deploy fail → failed at installing with code internal; update retries it (failing again); remove → removed', async () => {
    const res = await deploy('vm_tpweb2', { template: 'broken' });
    expect(res.status).toBe(202);
    const id = res.body.deployment.id;
    expect(res.body.deployment).toEqual(deploymentBody({ id, server_id: 'vm_tpweb2', template: 'broken', version: '1' }));
    await advance.runUntilIdle();
    expect(await getOperation(res.body.operation.id)).toEqual({
      ...res.body.operation,
      status: 'failed',
      steps: [
        { name: 'installing', status: 'failed' },
        { name: 'configuring', status: 'pending' },
        { name: 'starting_app', status: 'pending' },
      ],
      error: { code: 'internal', message: 'Template broken 1 failed to install' },
      finished_at: NOW,
    });
    expect((await getDeployment(id)).body).toEqual(deploymentBody({ id, server_id: 'vm_tpweb2', template: 'broken', version: '1', status: 'failed' }));
    expect(await app(id)).toBeUndefined();

    const retry = await update(id, {});
    expect(retry.status).toBe(202);
    await advance.runUntilIdle();
    expect((await getOperation(retry.body.operation.id)).status).toBe('failed');
    expect((await getDeployment(id)).body.status).toBe('failed');

    const gone = await remove(id);
    expect(gone.status).toBe(202);
    await advance.runUntilIdle();
    expect((await getOperation(gone.body.operation.id)).result).toEqual({ deployment_id: id, status: 'removed' });
    expect((await getDeployment(id)).body).toEqual(deploymentBody({ id, server_id: 'vm_tpweb2', template: 'broken', version: '1', status: 'removed' }));
  });

  it('health of an unhealthy template → unhealthy with health_checked_at', async () => {
    const res = await deploy('vm_tpweb2', { template: 'sick' });
    await advance.runUntilIdle();
    const id = res.body.deployment.id;
    expect((await getDeployment(id)).body.status).toBe('active');
    const h = await health(id);
    expect(h.status).toBe(202);
    await advance.runUntilIdle();
    expect(await getOperation(h.body.operation.id)).toEqual(succeeded(h.body.operation, { deployment_id: id, health: 'unhealthy', checked_at: NOW }));
    expect((await getDeployment(id)).body).toEqual(
      deploymentBody({ id, server_id: 'vm_tpweb2', template: 'sick', version: '1', status: 'active', health: 'unhealthy', health_checked_at: NOW }),
    );
  });

  describe('refusals, with their envelopes', () => {
    it('400: body members (template, version, variables) before anything else', async () => {
      const cases: [object, string, string][] = [
        [{}, 'template', 'template is required'],
        [{ template: 5 }, 'template', 'template must be a string'],
        [{ template: 'wordpress', version: 6 }, 'version', 'version must be a string'],
        [{ template: 'wordpress', variables: ['a'] }, 'variables', 'variables must be an object of string values'],
        [{ template: 'wordpress', variables: { admin_email: 5 } }, 'variables.admin_email', 'variables.admin_email must be a string of 0 to 4096 characters'],
        [{ template: 'wordpress', variables: { admin_email: 'x'.repeat(4097) } }, 'variables.admin_email', 'variables.admin_email must be a string of 0 to 4096 characters'],
        [{ template: 'wordpress', version: '7.0', variables: {} }, 'version', 'version must be one of the versions of template wordpress: 6.5, 6.6'],
        [{ template: 'wordpress', variables: { nope: 'x', admin_email: 'a', admin_password: 'b' } }, 'variables.nope', 'variables: nope is no variable of template wordpress'],
        [{ template: 'wordpress', variables: { admin_email: 'a' } }, 'variables.admin_password', 'variables: admin_password is required'],
        [{ template: 'wordpress', variables: { admin_email: '', admin_password: 'b' } }, 'variables.admin_email', 'variables: admin_email is required and must not be empty'],
        [
          { template: 'wordpress', variables: { admin_email: 'a', admin_password: '[redacted]' } },
          'variables.admin_password',
          'variables: admin_password is secret and cannot be set to "[redacted]" (leave it out to keep its value)',
        ],
      ];
      for (const [body, field, message] of cases) {
        const res = await deploy('vm_tpweb3', body);
        expect({ body, status: res.status, answer: res.body }).toEqual({ body, status: 400, answer: errorBody(res, 'invalid_request', message, { field }) });
      }
      // A template-decided 400 comes before the 404 of an unknown server.
      const first = await deploy('vm_nope', { template: 'wordpress', version: '1' });
      expect(first.status).toBe(400);
      expect(await t.sql(`SELECT id FROM deployments WHERE server_id = 'vm_tpweb3'`)).toEqual([]);
    });

    it('404: server (or another organization\'s), template, deployment', async () => {
      const server = await deploy('vm_nope', { template: 'postgres', variables: { password: 'x' } });
      expect(server.status).toBe(404);
      expect(server.body).toEqual(errorBody(server, 'not_found', 'Server vm_nope not found'));
      const foreign = await deploy('vm_txweb1', { template: 'postgres', variables: { password: 'x' } });
      expect(foreign.body).toEqual(errorBody(foreign, 'not_found', 'Server vm_txweb1 not found'));
      const template = await deploy('vm_tpweb3', { template: 'joomla' });
      expect(template.status).toBe(404);
      expect(template.body).toEqual(errorBody(template, 'not_found', 'Template joomla not found'));
      for (const res of [await update('dep_nope', {}), await health('dep_nope'), await remove('dep_nope'), await getDeployment('dep_nope')]) {
        expect(res.status).toBe(404);
        expect(res.body).toEqual(errorBody(res, 'not_found', 'Deployment dep_nope not found'));
      }
      const mine = (await t.http.get('/v1/deployments').set(rw)).body.deployments[0].id;
      const theirs = await t.http.get(`/v1/deployments/${mine}`).set(other);
      expect(theirs.body).toEqual(errorBody(theirs, 'not_found', `Deployment ${mine} not found`));
    });

    it('409 invalid_state: a stopped server, a deleted one', async () => {
      const stopped = await deploy('vm_tpstop', { template: 'sick' });
      expect(stopped.status).toBe(409);
      expect(stopped.body).toEqual(errorBody(stopped, 'invalid_state', 'Server vm_tpstop is stopped; deployments need a running server'));
      const gone = await deploy('vm_tpgone', { template: 'sick' });
      expect(gone.body).toEqual(errorBody(gone, 'invalid_state', 'Server vm_tpgone is deleted; deployments need a running server'));
    });

    it('409 quota_exceeded: 10 deployments not removed on a server', async () => {
      const ids = Array.from({ length: 10 }, (_, i) => `tq${i}`);
      await t.seed({ templates: ids.map((id) => ({ id, name: id, versions: ['1'], variables: [] })), regions: [], organizations: [] });
      for (const id of ids) {
        expect((await deploy('vm_tpfull', { template: id })).status).toBe(202);
        await advance.runUntilIdle();
      }
      const res = await deploy('vm_tpfull', { template: 'sick' });
      expect(res.status).toBe(409);
      expect(res.body).toEqual(errorBody(res, 'quota_exceeded', 'Server vm_tpfull holds 10 deployments that are not removed', { limit: 10 }));
    });

    it('403: a vm:read key, a viewer session; a developer may deploy', async () => {
      for (const headers of [ro, viewer]) {
        const res = await deploy('vm_tpweb3', { template: 'sick' }, headers);
        expect(res.status).toBe(403);
        expect(res.body.error.code).toBe('forbidden');
      }
      const dev = await deploy('vm_tpweb3', { template: 'sick' }, developer);
      expect(dev.status).toBe(202);
      expect(await t.sql(`SELECT actor_type FROM audit_log WHERE target_id = $1`, [dev.body.deployment.id])).toEqual([{ actor_type: 'user' }]);
      await advance.runUntilIdle();
    });

    it('Idempotency-Key: the same request again replays the answer, nothing written twice', async () => {
      const headers = { ...rw, 'Idempotency-Key': 'deploy-pg-web3' };
      const body = { template: 'postgres', variables: { password: 'idem-secret' } };
      const first = await deploy('vm_tpweb3', body, headers);
      expect(first.status).toBe(202);
      const second = await deploy('vm_tpweb3', body, headers);
      expect(second.status).toBe(202);
      expect(second.headers['idempotent-replayed']).toBe('true');
      expect(second.body).toEqual(first.body);
      expect(await t.sql(`SELECT count(*)::int AS n FROM deployments WHERE server_id = 'vm_tpweb3' AND template_id = 'postgres'`)).toEqual([{ n: 1 }]);
      const changed = await deploy('vm_tpweb3', { ...body, version: '15' }, headers);
      expect(changed.status).toBe(409);
      expect(changed.body.error.code).toBe('idempotency_conflict');
      await advance.runUntilIdle();
    });

    it('503 provider_unavailable while the compute provider is down, nothing recorded', async () => {
      const before = await t.sql(`SELECT count(*)::int AS n FROM operations`);
      // The compute provider's circuit (instances) open, or its apps' one: either refuses.
      for (const setDown of [setComputeProviderDown, setAppsDown]) {
        await setDown(t, true);
        try {
          const res = await deploy('vm_tpweb2', { template: 'postgres', variables: { password: 'x' } });
          expect(res.status).toBe(503);
          expect(res.body).toEqual(errorBody(res, 'provider_unavailable', 'The compute provider is unavailable; nothing was recorded. Try again later'));
          const h = await health((await t.http.get('/v1/deployments?server_id=vm_tpweb2&status=active').set(rw)).body.deployments[0].id);
          expect(h.status).toBe(503);
        } finally {
          t.settings.providerDown = false;
          await setComputeProviderDown(t, false);
          await setAppsDown(t, false);
        }
      }
      expect(await t.sql(`SELECT count(*)::int AS n FROM operations`)).toEqual(before);
      expect(await t.sql(`SELECT id FROM deployments WHERE server_id = 'vm_tpweb2' AND template_id = 'postgres'`)).toEqual([]);
    });

    it('GET /v1/deployments: newest first, filters, limit 1–100, cursor; 400 naming the parameter', async () => {
      const all = (await t.http.get('/v1/deployments?limit=100').set(rw)).body;
      expect(all.deployments.length).toBeGreaterThan(10);
      expect(all.deployments.every((d: { status: string }) => d.status !== 'removed')).toBe(true);
      const page1 = (await t.http.get('/v1/deployments?limit=2').set(rw)).body;
      expect(page1.deployments).toEqual(all.deployments.slice(0, 2));
      const page2 = (await t.http.get(`/v1/deployments?limit=2&cursor=${page1.next_cursor}`).set(rw)).body;
      expect(page2.deployments).toEqual(all.deployments.slice(2, 4));
      const failed = (await t.http.get('/v1/deployments?status=active&server_id=vm_tpweb2').set(rw)).body;
      expect(failed.deployments.map((d: { template: string }) => d.template)).toEqual(['sick']);
      for (const [q, field] of [['limit=0', 'limit'], ['limit=101', 'limit'], ['status=gone', 'status'], ['cursor=zz', 'cursor']]) {
        const res = await t.http.get(`/v1/deployments?${q}`).set(rw);
        expect(res.status).toBe(400);
        expect(res.body.error.details).toEqual({ field });
      }
    });

    it("GET /v1/servers/{id}/deployments: the server's deployments as the filtered list shows them; 404 for another organization's server; 400 naming the parameter", async () => {
      const filtered = await t.http.get('/v1/deployments?server_id=vm_tpweb2&limit=100').set(rw);
      const res = await t.http.get('/v1/servers/vm_tpweb2/deployments?limit=100').set(rw);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body.deployments.length).toBeGreaterThan(0);
      expect(res.body).toEqual(filtered.body);
      const active = await t.http.get('/v1/servers/vm_tpweb2/deployments?status=active').set(rw);
      expect(active.body).toEqual((await t.http.get('/v1/deployments?server_id=vm_tpweb2&status=active').set(rw)).body);
      const page1 = (await t.http.get('/v1/servers/vm_tpweb2/deployments?limit=1').set(rw)).body;
      expect(page1.deployments).toEqual(res.body.deployments.slice(0, 1));
      for (const id of ['vm_nope', 'vm_txweb1']) {
        const missing = await t.http.get(`/v1/servers/${id}/deployments`).set(rw);
        expect(missing.status).toBe(404);
        expect(missing.body).toEqual({ error: { code: 'not_found', message: `Server ${id} not found`, details: {}, request_id: missing.headers['x-request-id'] } });
      }
      for (const [q, field] of [['limit=0', 'limit'], ['status=gone', 'status'], ['cursor=zz', 'cursor']]) {
        const bad = await t.http.get(`/v1/servers/vm_tpweb2/deployments?${q}`).set(rw);
        expect({ q, status: bad.status, details: bad.body.error.details }).toEqual({ q, status: 400, details: { field } });
      }
    });
  });

  it("a deleted server's deployments become removed (TemplateDeployments.removeAllForServer, in the caller's transaction)", async () => {
    const live = (await t.http.get('/v1/deployments?server_id=vm_tpfull').set(rw)).body.deployments.map((d: { id: string }) => d.id).sort();
    expect(live).toHaveLength(10);
    // What the vm.delete executor records in its transaction: the server deleted, then its deployments removed.
    await t.sql(`UPDATE servers SET status = 'deleted', deleted_at = now() WHERE id = 'vm_tpfull'`);
    await t.sql(`UPDATE provider_instances SET deleted_at = now() WHERE server_id = 'vm_tpfull'`);
    const removed = await t.app.get(UnitOfWork).run(() => t.app.get(TemplateDeployments).removeAllForServer('vm_tpfull'));
    expect(removed).toEqual(live);
    expect((await t.http.get('/v1/deployments?server_id=vm_tpfull').set(rw)).body).toEqual({ deployments: [], next_cursor: null });
    expect(await t.sql(`SELECT DISTINCT status FROM deployments WHERE server_id = 'vm_tpfull'`)).toEqual([{ status: 'removed' }]);
    // In the caller's transaction: rolled back with it.
    const web2 = await t.sql(`SELECT id, status FROM deployments WHERE server_id = 'vm_tpweb2' ORDER BY id`);
    await expect(
      t.app.get(UnitOfWork).run(async () => {
        expect((await t.app.get(TemplateDeployments).removeAllForServer('vm_tpweb2')).length).toBeGreaterThan(0);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await t.sql(`SELECT id, status FROM deployments WHERE server_id = 'vm_tpweb2' ORDER BY id`)).toEqual(web2);
  });

  it('cli verify: the provider apps are the active deployments; an app without deployment, a stopped app and a deleted server\'s live deployment are named', async () => {
    await expectVerified(t);
    const checks = new TypeOrmInvariantChecks(t.app.get(Db), t.app.get(BlockStorage), t.app.get(ComputeProvider), undefined, t.app.get(TemplateApps));
    const verify = () => new VerifyInvariants(t.app.get(UnitOfWork), checks, new SystemClock()).execute();
    const active = (await t.sql<{ id: string }>(`SELECT id FROM deployments WHERE server_id = 'vm_tpweb2' AND status = 'active' ORDER BY id LIMIT 1`))[0].id;
    await t.sql(`INSERT INTO provider_apps (deployment_id, server_id, template_id, version, state) VALUES ('dep_stray', 'vm_tpweb3', 'sick', '1', 'running')`);
    await t.sql(`UPDATE provider_apps SET state = 'stopped' WHERE deployment_id = $1`, [active]);
    await t.sql(`INSERT INTO deployments (id, org_id, server_id, template_id, version, status) VALUES ('dep_ongone', 'org_tp', 'vm_tpgone', 'sick', '1', 'active')`);
    const report = await verify();
    const named = report.violations.filter((v) => v.check === 'provider.apps_match_deployments').map((v) => [v.subject, v.message]);
    expect(named.sort()).toEqual(
      [
        [active, 'active deployment of sick 1 but the provider runs sick 1 (stopped)'],
        ['dep_ongone', 'deployment is active but its server vm_tpgone is deleted'],
        ['dep_stray', 'the provider holds an app of sick on vm_tpweb3 for a deployment that does not exist'],
      ].sort(),
    );
    await t.sql(`DELETE FROM provider_apps WHERE deployment_id = 'dep_stray'`);
    await t.sql(`DELETE FROM deployments WHERE id = 'dep_ongone'`);
    await t.sql(`UPDATE provider_apps SET state = 'running' WHERE deployment_id = $1`, [active]);
    await expectVerified(t);
  });

  it('DELETE /v1/servers/{id}: the deleted server\'s active deployment becomes removed, readable, with no app left in use', async () => {
    const res = await deploy('vm_tpdel', { template: 'postgres', variables: { password: 'doomed-secret-pg' } });
    expect(res.status).toBe(202);
    const id = res.body.deployment.id;
    await advance.runUntilIdle();
    expect((await getDeployment(id)).body.status).toBe('active');

    const deleted = await t.http.delete('/v1/servers/vm_tpdel').set(rw);
    expect(deleted.status).toBe(202);
    await advance.runUntilIdle();
    expect(await getOperation(deleted.body.operation.id)).toEqual(
      expect.objectContaining({ type: 'vm.delete', status: 'succeeded', result: { server_id: 'vm_tpdel', detached_volume_ids: [], deleted_at: NOW } }),
    );
    expect((await t.http.get('/v1/servers/vm_tpdel').set(rw)).body).toEqual(expect.objectContaining({ status: 'deleted', ipv4: null, deleted_at: NOW }));
    expect((await getDeployment(id)).body).toEqual(
      deploymentBody({ id, server_id: 'vm_tpdel', template: 'postgres', version: '16', status: 'removed', health: 'unknown', variables: { password: '[redacted]' } }),
    );
    expect((await t.http.get('/v1/deployments?server_id=vm_tpdel').set(rw)).body).toEqual({ deployments: [], next_cursor: null });
  });
});
