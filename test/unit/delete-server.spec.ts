import { TemplateDeployments } from '../../src/modules/templates/application/deployments.port';
import { ServerAccess } from '../../src/modules/access/application/server-access';
import { InMemoryAuditTrail } from '../../src/modules/audit/testing/in-memory-audit-trail';
import { Principal } from '../../src/modules/auth/domain/principal';
import { OperationExecutors } from '../../src/modules/operations/application/operation-executors';
import { Operation } from '../../src/modules/operations/domain/operation';
import { InMemoryOperationRepository } from '../../src/modules/operations/testing/in-memory-operations.repository';
import { ComputeGateway } from '../../src/modules/servers/application/compute-gateway';
import { ComputeHealth } from '../../src/modules/servers/application/compute-provider.port';
import { DeleteServerExecutor } from '../../src/modules/servers/application/delete-server.executor';
import { deleteServerParams } from '../../src/modules/servers/application/delete-server-params';
import { DeleteServer } from '../../src/modules/servers/application/delete-server.use-case';
import { Server } from '../../src/modules/servers/domain/server';
import { InMemoryComputeProvider } from '../../src/modules/servers/testing/in-memory-compute-provider';
import { InMemoryServerDeletions } from '../../src/modules/servers/testing/in-memory-server-deletions';
import { InMemoryServers } from '../../src/modules/servers/testing/in-memory-servers';
import { ProviderHealth } from '../../src/modules/storage-provider/application/block-storage.port';
import { ProviderGateway } from '../../src/modules/storage-provider/application/provider-gateway';
import { InMemoryBlockStorage } from '../../src/modules/storage-provider/testing/in-memory-block-storage';
import { EventRecord } from '../../src/modules/webhooks/domain/events';
import { EventOutbox } from '../../src/modules/webhooks/application/event-outbox.port';
import { InMemoryUnitOfWork } from '../../src/shared/database/in-memory-unit-of-work';
import { FixedClock } from '../../src/shared/kernel/clock/clock';

const NOW = new Date('2026-11-27T10:00:00.000Z');
const KEY: Principal = { kind: 'api_key', orgId: 'org_1', credentialId: 'key_1', userId: null, role: null, scopes: ['vm:read', 'vm:write'] };

const server = (over: Partial<Server> = {}): Server => ({
  id: 'vm_1', orgId: 'org_1', name: 'web-1', status: 'running', regionId: 'id-jkt', zoneId: 'id-jkt-a', plan: null, vcpus: null,
  memoryGb: null, diskGb: null, image: null, ipv4: '100.64.0.1', termMonths: null, billing: null, price: null, expiresAt: null,
  labels: {}, deleteProtection: false, volumeIds: [], sshKeyIds: [], createdAt: new Date('2026-11-01T00:00:00Z'), deletedAt: null, instanceMissingSince: null, ...over,
});

class RecordingOutbox extends EventOutbox {
  readonly events: EventRecord[] = [];
  async record(e: EventRecord): Promise<void> {
    this.events.push(e);
  }
  async recordMany(es: readonly EventRecord[]): Promise<void> {
    this.events.push(...es);
  }
}

class Health extends ProviderHealth {
  down = false;
  isDown(): boolean {
    return this.down;
  }
}
class Compute extends ComputeHealth {
  down = false;
  isDown(): boolean {
    return this.down;
  }
}

async function refusal(work: Promise<unknown>): Promise<{ code: string; message: string; details: unknown }> {
  try {
    await work;
  } catch (err) {
    const e = err as { code: string; message: string; details: unknown };
    return { code: e.code, message: e.message, details: e.details };
  }
  throw new Error('accepted');
}

describe('DeleteServer and its vm.delete executor (in-memory adapters)', () => {
  let servers: InMemoryServers;
  let deletions: InMemoryServerDeletions;
  let storage: InMemoryBlockStorage;
  let compute: InMemoryComputeProvider;
  let audit: InMemoryAuditTrail;
  let outbox: RecordingOutbox;
  let rulesDeleted: string[];
  let deploymentsRemoved: string[];
  let operations: InMemoryOperationRepository;
  let computeHealth: Compute;
  let storageHealth: Health;
  let useCase: DeleteServer;
  let executor: DeleteServerExecutor;

  beforeEach(async () => {
    servers = new InMemoryServers();
    deletions = new InMemoryServerDeletions(servers);
    storage = new InMemoryBlockStorage();
    compute = new InMemoryComputeProvider();
    audit = new InMemoryAuditTrail();
    outbox = new RecordingOutbox();
    rulesDeleted = [];
    deploymentsRemoved = [];
    operations = new InMemoryOperationRepository();
    computeHealth = new Compute();
    storageHealth = new Health();
    const access = { deleteServerRules: async (_org: string, id: string) => (rulesDeleted.push(id), []) } as unknown as ServerAccess;
    const deployments = { removeAllForServer: async (id: string) => (deploymentsRemoved.push(id), []) } as TemplateDeployments;
    const clock = new FixedClock(NOW);
    useCase = new DeleteServer(new InMemoryUnitOfWork(), servers.reads, servers.writes, deletions, operations, audit, computeHealth, storageHealth, clock);
    executor = new DeleteServerExecutor(new OperationExecutors(), deletions, servers.reads, new ProviderGateway(storage), new ComputeGateway(compute), access, audit, outbox, clock, deployments);
    servers.put(server());
    compute.adopt('vm_1', 'id-jkt-a', '100.64.0.1');
    for (const v of ['vol_a', 'vol_b']) {
      deletions.disks.set(v, { volumeId: v, serverId: 'vm_1', mountPath: `/mnt/${v}`, mounted: true, status: 'attached' });
      await storage.createDisk({ volumeId: v, step: 'seed/create', zoneId: 'id-jkt-a', sizeGb: 10, type: 'premium' });
      await storage.attachDisk({ volumeId: v, step: 'seed/attach', serverId: 'vm_1' });
      await storage.mountDisk({ volumeId: v, step: 'seed/mount', mountPath: `/mnt/${v}` });
    }
  });

  /** Accepts the deletion and claims its operation as a worker would. */
  const accepted = async (): Promise<Operation> => {
    const { operation } = await useCase.execute(KEY, 'vm_1', '203.0.113.9');
    operation.claim('w1', new Date(NOW.getTime() + 60_000), NOW);
    return operation;
  };
  /** Runs the steps in order until one throws; the error, or undefined when all succeeded. */
  const run = async (op: Operation, upTo = executor.steps.length): Promise<unknown> => {
    for (const step of executor.steps.slice(0, upTo)) {
      if (!op.snapshot().steps.some((s) => s.name === step.name)) continue;
      op.startStep(step.name, new Date(NOW.getTime() + 60_000));
      try {
        const performed = await step.perform?.(op);
        const result = await step.commit(op, performed);
        op.completeStep(step.name);
        if (!op.nextStep()) op.succeed(result ?? {}, NOW);
      } catch (err) {
        return err;
      }
    }
    return undefined;
  };
  const failWith = async (op: Operation, err: unknown) => {
    const e = err as { code: 'invalid_state'; message: string };
    op.fail({ code: e.code ?? 'provider_unavailable', message: e.message }, NOW);
    await executor.failed(op, op.snapshot().error!, await executor.observe(op));
  };

  it('accepts: deleting at once, the steps, the params (former status, the deleter, the disks), the audit row', async () => {
    const { server: s, operation } = await useCase.execute(KEY, 'vm_1', '203.0.113.9');
    expect(s.status).toBe('deleting');
    expect(operation.snapshot()).toMatchObject({ type: 'vm.delete', vmId: 'vm_1', volumeId: null, steps: [{ name: 'detaching_volumes', status: 'pending' }, { name: 'deleting_instance', status: 'pending' }] });
    expect(deleteServerParams.read(operation.params)).toEqual({
      formerStatus: 'running',
      actor: { type: 'api_key', id: 'key_1', ip: '203.0.113.9' },
      disks: [{ volumeId: 'vol_a', mountPath: '/mnt/vol_a' }, { volumeId: 'vol_b', mountPath: '/mnt/vol_b' }],
    });
    expect(audit.entries).toEqual([
      { orgId: 'org_1', actorType: 'api_key', actorId: 'key_1', action: 'server.delete', targetId: 'vm_1', ipAddress: '203.0.113.9', data: { operation_id: operation.id, volume_ids: ['vol_a', 'vol_b'] } },
    ]);
  });

  it('refuses in order: an unfinished operation (named), deleting, protection; 503 with the compute provider down, or the storage one with disks', async () => {
    deletions.unfinished.set('vm_1', 'op_busy');
    servers.put(server({ deleteProtection: true }));
    expect(await refusal(useCase.execute(KEY, 'vm_1', null))).toEqual({ code: 'invalid_state', message: 'Server vm_1 has an operation pending or running (op_busy); wait for it to end', details: { operation_id: 'op_busy' } });
    deletions.unfinished.clear();
    expect(await refusal(useCase.execute(KEY, 'vm_1', null))).toMatchObject({ code: 'invalid_state', message: 'Server vm_1 has delete_protection on; turn it off (PATCH) before deleting it' });
    servers.put(server({ status: 'stopped' }));
    computeHealth.down = true;
    expect(await refusal(useCase.execute(KEY, 'vm_1', null))).toMatchObject({ code: 'provider_unavailable', message: 'The compute provider is unavailable; nothing was recorded. Retry later' });
    computeHealth.down = false;
    // The in-memory unit of work does not roll back (server-delete.e2e shows nothing is recorded): put the server back.
    servers.put(server({ status: 'stopped' }));
    storageHealth.down = true;
    expect(await refusal(useCase.execute(KEY, 'vm_1', null))).toMatchObject({ code: 'provider_unavailable' });
    // Without disks the storage provider is not needed.
    servers.put(server({ status: 'stopped' }));
    deletions.disks.clear();
    expect((await useCase.execute(KEY, 'vm_1', null)).operation.snapshot().steps).toEqual([{ name: 'deleting_instance', status: 'pending' }]);
    expect(await refusal(useCase.execute(KEY, 'vm_unknown', null))).toMatchObject({ code: 'not_found', message: 'Server vm_unknown not found' });
  });

  it('succeeds: both disks detached at the provider and available, audited by the deleter; the instance gone; deleted; rules; the event', async () => {
    const op = await accepted();
    expect(await run(op)).toBeUndefined();
    expect(op.snapshot()).toMatchObject({ status: 'succeeded', result: { server_id: 'vm_1', detached_volume_ids: ['vol_a', 'vol_b'], deleted_at: NOW.toISOString() } });
    expect([...deletions.disks.values()].map((d) => [d.volumeId, d.status, d.serverId])).toEqual([['vol_a', 'available', null], ['vol_b', 'available', null]]);
    expect(await storage.getDisk('vol_a')).toMatchObject({ serverId: null, mounted: false });
    expect(await compute.getInstance('vm_1')).toBeNull();
    expect(servers.byId.get('vm_1')).toMatchObject({ status: 'deleted', ipv4: null, deletedAt: NOW });
    expect(rulesDeleted).toEqual(['vm_1']);
    expect(deploymentsRemoved).toEqual(['vm_1']);
    expect(audit.entries.filter((e) => e.action === 'volume.detach')).toEqual(['vol_a', 'vol_b'].map((v) => ({
      orgId: 'org_1', actorType: 'api_key', actorId: 'key_1', ipAddress: '203.0.113.9', requestId: null, action: 'volume.detach', targetId: v,
      data: { operation_id: op.id, server_id: 'vm_1', mount_path: `/mnt/${v}`, reason: 'server_deleted' },
    })));
    expect(outbox.events).toEqual([{ orgId: 'org_1', type: 'server.deleted', createdAt: NOW, data: expect.objectContaining({ id: 'vm_1', status: 'deleted', ipv4: null, deleted_at: NOW.toISOString() }) }]);
  });

  it('a refused unmount of the second disk: the first stays detached (available, audited), the second attached, the server running again', async () => {
    storage.disks.set('vol_b', { ...storage.disks.get('vol_b')!, serverId: null, mountPath: null, mounted: false, deleted: true });
    const op = await accepted();
    const err = await run(op);
    expect(err).toMatchObject({ code: 'invalid_state', message: 'The storage provider has no disk for volume vol_b' });
    await failWith(op, err);
    expect(deletions.disks.get('vol_a')).toMatchObject({ status: 'available', serverId: null });
    expect(deletions.disks.get('vol_b')).toMatchObject({ status: 'attached', serverId: 'vm_1', mounted: true });
    expect(audit.entries.filter((e) => e.action === 'volume.detach').map((e) => e.targetId)).toEqual(['vol_a']);
    expect(servers.byId.get('vm_1')).toMatchObject({ status: 'running', deletedAt: null });
    expect(await compute.getInstance('vm_1')).toMatchObject({ serverId: 'vm_1' });
  });

  it("deleting_instance's answer lost: the read says the instance is gone, so the server is deleted (never \"nothing happened\")", async () => {
    const op = await accepted();
    expect(await run(op, 1)).toBeUndefined();
    compute.loseNextAnswer();
    const err = await run(op);
    expect(err).toBeDefined();
    await failWith(op, err);
    expect(servers.byId.get('vm_1')).toMatchObject({ status: 'deleted', ipv4: null, deletedAt: NOW });
    expect(rulesDeleted).toEqual(['vm_1']);
    expect(deploymentsRemoved).toEqual(['vm_1']);
    expect(outbox.events.map((e) => e.type)).toEqual(['server.deleted']);
  });

  it('deleting_instance refused while the instance stays: the former status comes back; unreadable: deleting is kept', async () => {
    servers.put(server({ status: 'stopped' }));
    const op = await accepted();
    expect(await run(op, 1)).toBeUndefined();
    compute.failNext(1);
    await failWith(op, await run(op));
    expect(servers.byId.get('vm_1')).toMatchObject({ status: 'stopped', deletedAt: null });

    const again = await accepted();
    compute.down = true;
    await failWith(again, await run(again));
    expect(servers.byId.get('vm_1')).toMatchObject({ status: 'deleting', deletedAt: null });
    expect(outbox.events).toEqual([]);
  });
});
