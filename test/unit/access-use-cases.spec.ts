import { CreateFirewallRule, DeleteFirewallRule, FirewallQueries, validateNewRule } from '../../src/modules/access/application/firewall-rules.use-cases';
import { ServerAccess } from '../../src/modules/access/application/server-access';
import { CreateSshKey, DeleteSshKey, RenameSshKey, SshKeyQueries, validateNewSshKey } from '../../src/modules/access/application/ssh-keys.use-cases';
import { InMemoryFirewallRules, InMemoryServerDirectory, InMemorySshKeys } from '../../src/modules/access/testing/in-memory-access';
import { InMemoryAuditTrail } from '../../src/modules/audit/testing/in-memory-audit-trail';
import { Actor } from '../../src/modules/auth/application/api-keys.use-cases';
import { InMemoryUnitOfWork } from '../../src/shared/database/in-memory-unit-of-work';
import { FixedClock } from '../../src/shared/kernel/clock/clock';
import { DomainError } from '../../src/shared/kernel/errors/domain-error';
import { SSH_KEYS } from '../support/ssh-keys';

/** The DomainError `work` rejects with: code, message and details. */
async function asyncRefusal(work: () => Promise<unknown>): Promise<{ code: string; message: string; details?: unknown }> {
  try {
    await work();
  } catch (err) {
    if (err instanceof DomainError) return err.details === undefined ? { code: err.code, message: err.message } : { code: err.code, message: err.message, details: err.details };
    throw err;
  }
  throw new Error('expected a refusal');
}

const actor: Actor = { type: 'user', id: 'usr_1', ip: '203.0.113.7' };
const ORG = 'org_a';

describe('SSH key use cases (in-memory adapters)', () => {
  const build = () => {
    const keys = new InMemorySshKeys();
    const audit = new InMemoryAuditTrail();
    const uow = new InMemoryUnitOfWork();
    const clock = new FixedClock(new Date('2026-11-26T10:00:00.000Z'));
    return { keys, audit, create: new CreateSshKey(uow, keys, audit, clock), rename: new RenameSshKey(uow, keys, audit), remove: new DeleteSshKey(uow, keys, audit), queries: new SshKeyQueries(keys) };
  };

  it('creates under the lock and audits the fingerprint, never the key', async () => {
    const { keys, audit, create } = build();
    const key = await create.execute(ORG, validateNewSshKey({ name: 'laptop', public_key: SSH_KEYS.ed.line }), actor);
    expect(key).toEqual({ id: expect.stringMatching(/^ssh_/), orgId: ORG, name: 'laptop', type: 'ssh-ed25519', fingerprint: SSH_KEYS.ed.fingerprint, publicKey: SSH_KEYS.ed.line, createdAt: new Date('2026-11-26T10:00:00.000Z') });
    expect(keys.locks).toBe(1);
    expect(audit.entries).toEqual([
      { orgId: ORG, actorType: 'user', actorId: 'usr_1', ipAddress: '203.0.113.7', targetType: 'ssh_key', action: 'ssh_key.create', targetId: key.id, data: { name: 'laptop', type: 'ssh-ed25519', fingerprint: SSH_KEYS.ed.fingerprint } },
    ]);
  });

  it('checks the fingerprint before the name, and both before the limit', async () => {
    const { keys, create } = build();
    const first = await create.execute(ORG, validateNewSshKey({ name: 'laptop', public_key: SSH_KEYS.ed.line }), actor);
    for (let i = 0; i < 99; i++) {
      await keys.insert({ ...first, id: `ssh_fill${i}`, name: `fill${i}`, fingerprint: `SHA256:fill${i}` });
    }
    const both = await asyncRefusal(() => create.execute(ORG, validateNewSshKey({ name: 'laptop', public_key: SSH_KEYS.ed.line }), actor));
    expect(both).toMatchObject({ code: 'conflict', details: { existing_id: first.id, field: 'public_key' } });
    const name = await asyncRefusal(() => create.execute(ORG, validateNewSshKey({ name: 'laptop', public_key: SSH_KEYS.e256.line }), actor));
    expect(name).toMatchObject({ code: 'conflict', details: { existing_id: first.id, field: 'name' } });
    const limit = await asyncRefusal(() => create.execute(ORG, validateNewSshKey({ name: 'new', public_key: SSH_KEYS.e256.line }), actor));
    expect(limit).toMatchObject({ code: 'quota_exceeded', details: { limit: 100 } });
    // Another organization is not counted.
    expect((await create.execute('org_b', validateNewSshKey({ name: 'laptop', public_key: SSH_KEYS.ed.line }), actor)).orgId).toBe('org_b');
  });

  it('renames (audited old and new; the same name is no change), deletes (then 404)', async () => {
    const { audit, create, rename, remove, queries } = build();
    const key = await create.execute(ORG, validateNewSshKey({ name: 'laptop', public_key: SSH_KEYS.ed.line }), actor);
    expect((await rename.execute(ORG, key.id, { name: 'laptop' }, actor)).name).toBe('laptop');
    expect((await rename.execute(ORG, key.id, { name: 'work' }, actor)).name).toBe('work');
    await remove.execute(ORG, key.id, actor);
    expect(await asyncRefusal(() => remove.execute(ORG, key.id, actor))).toMatchObject({ code: 'not_found', message: `SSH key ${key.id} not found` });
    expect(await asyncRefusal(() => queries.get(ORG, key.id))).toMatchObject({ code: 'not_found' });
    expect(audit.entries.map((e) => [e.action, e.data])).toEqual([
      ['ssh_key.create', { name: 'laptop', type: 'ssh-ed25519', fingerprint: SSH_KEYS.ed.fingerprint }],
      ['ssh_key.update', { changes: { name: { old: 'laptop', new: 'work' } } }],
      ['ssh_key.delete', { name: 'work', fingerprint: SSH_KEYS.ed.fingerprint }],
    ]);
  });
});

describe('firewall rule use cases (in-memory adapters)', () => {
  const build = () => {
    const rules = new InMemoryFirewallRules(() => new Date('2026-11-26T10:00:00.000Z'));
    const servers = new InMemoryServerDirectory([
      { orgId: ORG, id: 'vm_live', live: true },
      { orgId: ORG, id: 'vm_gone', live: false },
      { orgId: 'org_b', id: 'vm_other', live: true },
    ]);
    const audit = new InMemoryAuditTrail();
    const uow = new InMemoryUnitOfWork();
    return { rules, audit, create: new CreateFirewallRule(uow, rules, servers, audit), remove: new DeleteFirewallRule(uow, rules, audit), queries: new FirewallQueries(rules, servers), access: new ServerAccess(uow, new InMemorySshKeys(), rules, audit) };
  };

  it('404 for a server that is not live in the organization, before the duplicate and the limit', async () => {
    const { create } = build();
    for (const serverId of ['vm_gone', 'vm_other', 'vm_none']) {
      const refusal = await asyncRefusal(() => create.execute(ORG, validateNewRule({ direction: 'in', protocol: 'icmp', sources: ['::/0'], server_id: serverId }), actor));
      expect(refusal).toEqual({ code: 'not_found', message: `Server ${serverId} not found` });
    }
  });

  it('the same canonical rule is 409 conflict naming it; the same rule for one server is another rule', async () => {
    const { create } = build();
    const first = await create.execute(ORG, validateNewRule({ direction: 'in', protocol: 'tcp', port: '22', sources: ['10.0.0.0/8'] }), actor);
    const again = await asyncRefusal(() => create.execute(ORG, validateNewRule({ direction: 'in', protocol: 'tcp', port: '22-22', sources: ['10.9.9.9/8'], description: 'x' }), actor));
    expect(again).toEqual({ code: 'conflict', message: `Firewall rule ${first.id} is the same rule (in canonical form)`, details: { existing_id: first.id } });
    const own = await create.execute(ORG, validateNewRule({ direction: 'in', protocol: 'tcp', port: '22', sources: ['10.0.0.0/8'], server_id: 'vm_live' }), actor);
    expect(own.serverId).toBe('vm_live');
  });

  it("the server's firewall: the rules in force, the defaults and the verdict; a deleted server's own rules deleted and audited", async () => {
    const { create, queries, access, audit } = build();
    const ssh = await create.execute(ORG, validateNewRule({ direction: 'in', protocol: 'tcp', port: '22', sources: ['203.0.113.0/24'], server_id: 'vm_live' }), actor);
    const all = await create.execute(ORG, validateNewRule({ direction: 'out', protocol: 'udp', port: '53', destinations: ['0.0.0.0/0'] }), actor);
    const fw = await queries.effective(ORG, 'vm_live', { direction: 'in', protocol: 'tcp', address: '203.0.113.8', port: '22' });
    expect(fw).toEqual({ serverId: 'vm_live', inboundDefault: 'deny', outboundDefault: 'deny', rules: [ssh, all], verdict: { allowed: true, ruleId: ssh.id } });
    expect(await asyncRefusal(() => queries.effective(ORG, 'vm_live', { direction: 'in' }))).toEqual({
      code: 'invalid_request', message: 'protocol is required: a verdict needs direction, protocol, address and (tcp, udp) port', details: { field: 'protocol' },
    });
    expect((await access.deleteServerRules(ORG, 'vm_live', actor)).map((r) => r.id)).toEqual([ssh.id]);
    expect((await queries.effective(ORG, 'vm_live', {})).rules).toEqual([all]);
    expect(audit.entries.at(-1)).toMatchObject({ action: 'firewall_rule.delete', targetId: ssh.id, data: { reason: 'server_deleted', server_id: 'vm_live' } });
  });
});
