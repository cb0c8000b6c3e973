import { InMemoryAuditTrail } from '../../src/modules/audit/testing/in-memory-audit-trail';
import { Principal } from '../../src/modules/auth/domain/principal';
import { ComputeGateway } from '../../src/modules/servers/application/compute-gateway';
import { CONSOLE_ATTEMPTS, CreateServerConsole } from '../../src/modules/servers/application/create-console.use-case';
import { Server } from '../../src/modules/servers/domain/server';
import { InMemoryComputeProvider } from '../../src/modules/servers/testing/in-memory-compute-provider';
import { InMemoryServers } from '../../src/modules/servers/testing/in-memory-servers';
import { FixedClock } from '../../src/shared/kernel/clock/clock';
import { DomainError } from '../../src/shared/kernel/errors/domain-error';

const NOW = new Date('2026-11-27T10:00:00.000Z');
const KEY: Principal = { kind: 'api_key', orgId: 'org_1', credentialId: 'key_1', userId: null, role: null, scopes: ['vm:read', 'vm:write'] };
const server: Server = {
  id: 'vm_1', orgId: 'org_1', name: 'web-1', status: 'running', regionId: 'id-jkt', zoneId: 'id-jkt-a', plan: null, vcpus: null, memoryGb: null,
  diskGb: null, image: null, ipv4: '100.64.0.1', termMonths: null, billing: null, price: null, expiresAt: null, labels: {}, deleteProtection: false,
  volumeIds: [], sshKeyIds: [], createdAt: new Date('2026-11-01T00:00:00Z'), deletedAt: null, instanceMissingSince: null,
};

describe('POST /v1/servers/{id}/console: a transient provider failure', () => {
  let compute: InMemoryComputeProvider;
  let useCase: CreateServerConsole;

  beforeEach(() => {
    const servers = new InMemoryServers();
    servers.put(server);
    compute = new InMemoryComputeProvider();
    compute.adopt('vm_1', 'id-jkt-a', '100.64.0.1');
    useCase = new CreateServerConsole(servers.reads, new ComputeGateway(compute), new InMemoryAuditTrail(), new FixedClock(NOW));
  });

  it(`is tried again within the request: ${CONSOLE_ATTEMPTS - 1} failed calls, then a credential`, async () => {
    compute.failNext(CONSOLE_ATTEMPTS - 1);
    const prepared = await useCase.prepare(KEY, 'vm_1');
    expect(prepared).toEqual({ serverId: 'vm_1', console: expect.objectContaining({ expiresAt: new Date(NOW.getTime() + 60_000) }) });
  });

  it(`answers 503 provider_unavailable after ${CONSOLE_ATTEMPTS} failed calls`, async () => {
    compute.failNext(CONSOLE_ATTEMPTS);
    const err = await useCase.prepare(KEY, 'vm_1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect({ code: (err as DomainError).code }).toEqual({ code: 'provider_unavailable' });
  });
});
