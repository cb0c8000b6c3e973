import { StepUnavailable } from '../../src/modules/operations/application/operation-executors';
import { CIRCUIT_THRESHOLD } from '../../src/modules/operations/application/provider-circuit';
import { DeploymentSecrets } from '../../src/modules/templates/application/deployment-secrets';
import { TemplateAppsGateway } from '../../src/modules/templates/application/template-apps-gateway';
import { changedMembers, Deployment, presentDeployment, resolveVariables, resolveVersion } from '../../src/modules/templates/domain/deployment';
import { Template } from '../../src/modules/templates/domain/template';
import { InMemoryTemplateApps } from '../../src/modules/templates/testing/in-memory-template-apps';
import { loadSettings } from '../../src/shared/config/settings';
import { DomainError } from '../../src/shared/kernel/errors/domain-error';
import { refusalOf } from '../support/assertions';
import { parseSeedFile } from '../../src/modules/operator/seed-file';

const wordpress: Template = {
  id: 'wordpress',
  name: 'WordPress',
  versions: ['6.5', '6.6'],
  variables: [
    { name: 'admin_email', description: 'e-mail', required: true, secret: false },
    { name: 'admin_password', description: 'password', required: true, secret: true },
    { name: 'site_title', description: 'title', required: false, secret: false },
    { name: 'smtp_password', description: 'smtp', required: false, secret: true },
  ],
  simulate: null,
};

describe('deployment variables', () => {
  it('splits secrets from the shown map ("[redacted]"), keys sorted', () => {
    expect(resolveVariables(wordpress, { site_title: 'Blog', admin_password: 's3', admin_email: 'a@b.c' }, undefined, false)).toEqual({
      shown: { admin_email: 'a@b.c', admin_password: '[redacted]', site_title: 'Blog' },
      secrets: { admin_password: 's3' },
    });
  });

  it('merges: a member replaces, null unsets an optional one, absent keeps (secrets too)', () => {
    const current = { shown: { admin_email: 'a@b.c', admin_password: '[redacted]', smtp_password: '[redacted]' }, secrets: { admin_password: 'p1', smtp_password: 'm1' } };
    expect(resolveVariables(wordpress, { admin_email: 'x@y.z', smtp_password: null }, current, true)).toEqual({
      shown: { admin_email: 'x@y.z', admin_password: '[redacted]' },
      secrets: { admin_password: 'p1' },
    });
    expect(resolveVariables(wordpress, {}, current, true)).toEqual(current);
  });

  it('refuses, naming the variable: unknown, not a string, too long, NUL, a secret "[redacted]", a required one missing, empty or unset', () => {
    const ok = { admin_email: 'a', admin_password: 'b' };
    const cases: [Record<string, unknown>, boolean, string, string][] = [
      [{ ...ok, nope: 'x' }, false, 'variables.nope', 'variables: nope is no variable of template wordpress'],
      [{ ...ok, site_title: 5 }, false, 'variables.site_title', 'variables: site_title must be a string of 0 to 4096 characters without NUL'],
      [{ ...ok, site_title: null }, false, 'variables.site_title', 'variables: site_title must be a string of 0 to 4096 characters without NUL'],
      [{ ...ok, site_title: 'x'.repeat(4097) }, false, 'variables.site_title', 'variables: site_title must be a string of 0 to 4096 characters without NUL'],
      [{ ...ok, site_title: 'a\u0000b' }, false, 'variables.site_title', 'variables: site_title must be a string of 0 to 4096 characters without NUL'],
      [{ ...ok, admin_password: '[redacted]' }, false, 'variables.admin_password', 'variables: admin_password is secret and cannot be set to "[redacted]" (leave it out to keep its value)'],
      [{ admin_email: 'a' }, false, 'variables.admin_password', 'variables: admin_password is required'],
      [{ ...ok, admin_email: '' }, false, 'variables.admin_email', 'variables: admin_email is required and must not be empty'],
      [{ ...ok, admin_email: null }, true, 'variables.admin_email', 'variables: admin_email is required and cannot be unset'],
    ];
    for (const [given, allowNull, field, message] of cases) {
      expect(refusalOf(() => resolveVariables(wordpress, given, undefined, allowNull))).toEqual({ code: 'invalid_request', message, details: { field } });
    }
    // A non-secret variable may read "[redacted]" as any value.
    expect(resolveVariables(wordpress, { ...ok, site_title: '[redacted]' }, undefined, false).shown.site_title).toBe('[redacted]');
  });

  it('versions: the last by default; one not offered is 400 naming version', () => {
    expect(resolveVersion(wordpress, undefined)).toBe('6.6');
    expect(resolveVersion(wordpress, '6.5')).toBe('6.5');
    expect(refusalOf(() => resolveVersion(wordpress, '7'))).toEqual({
      code: 'invalid_request', message: 'version must be one of the versions of template wordpress: 6.5, 6.6', details: { field: 'version' },
    });
  });

  it("an update's audit names what changes, old and new; a secret sent again is named, never its value", () => {
    const d = { version: '6.5', variables: { admin_email: 'a', admin_password: '[redacted]' } } as unknown as Deployment;
    expect(changedMembers(d, '6.6', { admin_email: 'b', admin_password: '[redacted]' }, new Set(['admin_password']))).toEqual({
      version: { old: '6.5', new: '6.6' },
      variables: { admin_email: { old: 'a', new: 'b' }, admin_password: { old: '[redacted]', new: '[redacted]' } },
    });
    expect(changedMembers(d, '6.5', d.variables, new Set())).toEqual({});
  });

  it('presents no secret and no sealed text', () => {
    const d: Deployment = {
      id: 'dep_1', orgId: 'org_1', serverId: 'vm_1', template: 'wordpress', version: '6.6', status: 'active', health: 'unknown', healthCheckedAt: null,
      variables: { admin_password: '[redacted]' }, secretsSealed: 'sealed:v1:xyz', pendingVersion: null, pendingVariables: null, pendingSecretsSealed: null,
      createdAt: new Date('2026-11-23T10:00:00.000Z'), removedAt: null,
    };
    expect(presentDeployment(d)).toEqual({
      id: 'dep_1', server_id: 'vm_1', template: 'wordpress', version: '6.6', status: 'active', health: 'unknown', health_checked_at: null,
      variables: { admin_password: '[redacted]' }, created_at: '2026-11-23T10:00:00.000Z',
    });
  });
});

describe('deployment secrets at rest', () => {
  const secrets = new DeploymentSecrets({ ...loadSettings({ NODE_ENV: 'test' }), deploymentSecretsKey: 'k'.repeat(40) });

  it('seal to AES-256-GCM text that opens only for its deployment and key', () => {
    const sealed = secrets.seal('dep_a', { admin_password: 'hunter2' })!;
    expect(sealed).toMatch(/^sealed:v1:/);
    expect(sealed).not.toContain('hunter2');
    expect(secrets.open('dep_a', sealed)).toEqual({ admin_password: 'hunter2' });
    expect(() => secrets.open('dep_b', sealed)).toThrow();
    const other = new DeploymentSecrets({ ...loadSettings({ NODE_ENV: 'test' }), deploymentSecretsKey: 'x'.repeat(40) });
    expect(() => other.open('dep_a', sealed)).toThrow();
    expect(secrets.seal('dep_a', {})).toBeNull();
    expect(secrets.open('dep_a', null)).toEqual({});
  });
});

describe('TemplateAppsGateway (in-memory apps)', () => {
  it('idempotent by deployment and step; unavailability becomes StepUnavailable and opens the circuit; a DomainError is final', async () => {
    const apps = new InMemoryTemplateApps();
    const gateway = new TemplateAppsGateway(apps);
    const first = await gateway.install({ deploymentId: 'dep_1', step: 'op_1/installing', serverId: 'vm_1', template: 'postgres', version: '16' });
    apps.apps.get('dep_1')!.version = 'changed';
    expect(await gateway.install({ deploymentId: 'dep_1', step: 'op_1/installing', serverId: 'vm_1', template: 'postgres', version: '16' })).toEqual(first);
    apps.failing.add('broken');
    await expect(gateway.install({ deploymentId: 'dep_2', step: 'op_2/installing', serverId: 'vm_1', template: 'broken', version: '1' })).rejects.toBeInstanceOf(DomainError);
    expect(gateway.isDown()).toBe(false);
    apps.down = true;
    for (let i = 0; i < CIRCUIT_THRESHOLD; i++) await expect(gateway.getApp('dep_1')).rejects.toBeInstanceOf(StepUnavailable);
    expect(gateway.isDown()).toBe(true);
    apps.down = false;
    await gateway.probeOnce();
    expect(gateway.isDown()).toBe(false);
    expect(await gateway.stopApp({ deploymentId: 'dep_none', step: 'op_3/stopping_app' })).toBeNull();
  });
});

describe('seed file: templates', () => {
  const file = (template: object) => JSON.stringify({ templates: [template], regions: [], organizations: [] });
  const ok = { id: 'wp', name: 'WordPress', versions: ['6.6'], variables: [{ name: 'admin_email', description: 'e', required: true, secret: false }] };

  it('older files (no templates) and valid templates load; bad members are 400 naming them', () => {
    expect(parseSeedFile(JSON.stringify({ regions: [], organizations: [] })).templates).toBeUndefined();
    expect(parseSeedFile(file({ ...ok, simulate: { deploy: 'fail' } })).templates).toHaveLength(1);
    const cases: [object, string][] = [
      [{ ...ok, id: 'bad id' }, 'templates[0].id'],
      [{ ...ok, versions: [] }, 'templates[0].versions'],
      [{ ...ok, variables: [{ ...ok.variables[0], name: '9lives' }] }, 'templates[0].variables[0].name'],
      [{ ...ok, variables: [{ ...ok.variables[0], name: 'x'.repeat(65) }] }, 'templates[0].variables[0].name'],
      [{ ...ok, variables: [{ ...ok.variables[0], secret: 'yes' }] }, 'templates[0].variables[0].secret'],
      [{ ...ok, simulate: { deploy: 'maybe' } }, 'templates[0].simulate.deploy'],
    ];
    for (const [template, field] of cases) {
      const refusal = refusalOf(() => parseSeedFile(file(template)));
      expect({ template, code: refusal.code, details: refusal.details }).toEqual({ template, code: 'invalid_request', details: { field } });
    }
  });
});
