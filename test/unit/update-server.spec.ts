import { loadSettings } from '../../src/shared/config/settings';
import { InMemoryAuditTrail } from '../../src/modules/audit/testing/in-memory-audit-trail';
import { Principal } from '../../src/modules/auth/domain/principal';
import { ServerQueries } from '../../src/modules/servers/application/server-queries';
import { UpdateServer } from '../../src/modules/servers/application/update-server.use-case';
import { Server } from '../../src/modules/servers/domain/server';
import { InMemoryServers } from '../../src/modules/servers/testing/in-memory-servers';
import { InMemoryUnitOfWork } from '../../src/shared/database/in-memory-unit-of-work';

const server = (over: Partial<Server> = {}): Server => ({
  id: 'vm_1', orgId: 'org_1', name: 'web-1', status: 'running', regionId: 'id-jkt', zoneId: 'id-jkt-a', plan: null, vcpus: null,
  memoryGb: null, diskGb: null, image: null, ipv4: '100.64.0.1', termMonths: null, billing: null, price: null, expiresAt: null,
  labels: {}, deleteProtection: true, volumeIds: [], sshKeyIds: [], createdAt: new Date('2026-11-01T00:00:00Z'), deletedAt: null,
  instanceMissingSince: null, ...over,
});
const session = (role: 'owner' | 'admin' | 'developer' | 'viewer'): Principal => ({
  kind: 'session', orgId: 'org_1', credentialId: 'ses_1', userId: `usr_${role}`, role, scopes: ['vm:read', 'vm:write'],
});
const KEY: Principal = { kind: 'api_key', orgId: 'org_1', credentialId: 'key_1', userId: null, role: null, scopes: ['vm:read', 'vm:write'] };

async function refusal(work: Promise<unknown>): Promise<{ code: string; message: string; details: unknown }> {
  try {
    await work;
  } catch (err) {
    const e = err as { code: string; message: string; details: unknown };
    return { code: e.code, message: e.message, details: e.details };
  }
  throw new Error('accepted');
}

describe('UpdateServer and ServerQueries (in-memory adapters)', () => {
  let servers: InMemoryServers;
  let audit: InMemoryAuditTrail;
  let update: UpdateServer;

  beforeEach(() => {
    servers = new InMemoryServers();
    audit = new InMemoryAuditTrail();
    update = new UpdateServer(new InMemoryUnitOfWork(), servers.reads, servers.writes, audit, loadSettings({ NODE_ENV: 'test' }));
    servers.put(server());
    servers.put(server({ id: 'vm_2', name: 'db-1', deleteProtection: false, createdAt: new Date('2026-11-02T00:00:00Z') }));
    servers.put(server({ id: 'vm_gone', name: 'old', status: 'deleted', ipv4: null, deletedAt: new Date('2026-11-03T00:00:00Z') }));
  });

  it('turning protection off: a developer session is 403 (also before the body is checked); admin, owner and an API key may', async () => {
    await expect(update.refuseProtectionOff(session('developer'), 'vm_1', { delete_protection: false, name: '_bad' })).rejects.toMatchObject({ code: 'forbidden' });
    await expect(update.refuseProtectionOff(session('developer'), 'vm_2', { delete_protection: false })).resolves.toBeUndefined();
    expect(await refusal(update.execute(session('developer'), { serverId: 'vm_1', deleteProtection: false }, null))).toEqual({
      code: 'forbidden', message: 'Role developer may not turn delete_protection off; it needs one of: admin, owner', details: undefined,
    });
    expect(audit.entries).toEqual([]);
    for (const who of [session('admin'), session('owner'), KEY]) {
      servers.put(server());
      expect((await update.execute(who, { serverId: 'vm_1', deleteProtection: false }, '10.0.0.1')).deleteProtection).toBe(false);
    }
    expect(audit.entries.map((e) => [e.action, e.targetId, e.data])).toEqual(
      Array.from({ length: 3 }, () => ['server.update', 'vm_1', { changes: { delete_protection: { old: true, new: false } } }]),
    );
  });

  it('no change writes nothing; a taken name is conflict naming the holder; a deleted server is invalid_state; unknown is not_found', async () => {
    expect((await update.execute(KEY, { serverId: 'vm_1', name: 'web-1', labels: {} }, null)).name).toBe('web-1');
    expect(audit.entries).toEqual([]);
    expect(await refusal(update.execute(KEY, { serverId: 'vm_1', name: 'db-1' }, null))).toEqual({
      code: 'conflict', message: 'Server name db-1 is taken by another server of the organization', details: { existing_id: 'vm_2' },
    });
    expect((await update.execute(KEY, { serverId: 'vm_1', name: 'old' }, null)).name).toBe('old');
    expect(await refusal(update.execute(KEY, { serverId: 'vm_gone', labels: {} }, null))).toMatchObject({ code: 'invalid_state' });
    expect(await refusal(update.execute(KEY, { serverId: 'vm_none', labels: {} }, null))).toMatchObject({ code: 'not_found', message: 'Server vm_none not found' });
    expect(await refusal(update.execute(KEY, { serverId: 'vm_1', name: 'a.' }, null))).toMatchObject({ code: 'invalid_request', details: { field: 'name' } });
  });

  it('lists live servers newest first by default, deleted ones on request, in pages', async () => {
    const queries = new ServerQueries(servers.reads);
    const ids = (r: { servers: Server[] }) => r.servers.map((s) => s.id);
    expect(ids(await queries.list(KEY, {}))).toEqual(['vm_2', 'vm_1']);
    expect(ids(await queries.list(KEY, { status: 'deleted' }))).toEqual(['vm_gone']);
    const first = await queries.list(KEY, { limit: '1' });
    expect(ids(first)).toEqual(['vm_2']);
    const second = await queries.list(KEY, { limit: '1', cursor: first.nextCursor! });
    expect({ ids: ids(second), next: second.nextCursor }).toEqual({ ids: ['vm_1'], next: null });
    await expect(queries.get({ ...KEY, orgId: 'org_2' }, 'vm_1')).rejects.toMatchObject({ code: 'not_found' });
  });
});
