import { Db } from '../../../shared/database/transaction';
import { ComputeProvider, ComputeUnavailable, ProviderInstance } from '../../servers/application/compute-provider.port';
import { Finding, InvariantCheck } from '../application/invariant-checks.port';

interface ServerRow {
  id: string;
  org_id: string;
  status: string;
  ipv4: string | null;
  vcpus: number | null;
  memory_gb: number | null;
  disk_gb: number | null;
  image: string | null;
  deleted: boolean;
  busy: boolean;
}

/** The instance's power a settled server status expects (statuses in flight have an unfinished operation and are skipped); a suspended server's instance is off once its vm.suspend ended. */
const POWER: Record<string, string> = { running: 'running', stopped: 'stopped', suspended: 'stopped' };

/**
 * servers.md "The compute provider and the operations": the provider's instances are the live
 * servers. Every live server past `creating` with no unfinished vm.* operation has a live instance
 * at the compute provider with the server's ipv4 (and, running or stopped, the same power); no live
 * instance is left for a deleted server or for no server at all, unless an unfinished vm.*
 * operation names that server (a purchase failing, a deletion under way). The instances come from
 * the ComputeProvider port (a real provider's adapter is checked the same way).
 */
export class ProviderInstancesCheck implements InvariantCheck {
  readonly name = 'provider.instances_match_servers';
  readonly description =
    'Every live server (not creating, no vm.* operation in flight) has a live instance at the compute provider with its ipv4, power, plan specs and image; no live instance belongs to a deleted or unknown server';

  constructor(
    private readonly db: Db,
    private readonly compute: ComputeProvider,
  ) {}

  async findViolations(): Promise<Finding[]> {
    let instances: ProviderInstance[];
    try {
      instances = await this.compute.listInstances();
    } catch (err) {
      if (!(err instanceof ComputeUnavailable)) throw err;
      return [{ subject: 'compute_provider', message: `the compute provider could not list its instances: ${err.message}`, details: {} }];
    }
    const byServer = new Map(instances.map((i) => [i.serverId, i]));
    const servers = await this.db.query<ServerRow>(
      `SELECT s.id, s.org_id, s.status, s.ipv4, s.vcpus, s.memory_gb, s.disk_gb, s.image_id AS image, s.deleted_at IS NOT NULL AS deleted,
              EXISTS (SELECT 1 FROM operations o WHERE o.vm_id = s.id AND o.type LIKE 'vm.%' AND o.status IN ('pending', 'running')) AS busy
         FROM servers s
        WHERE s.deleted_at IS NULL OR s.id = ANY($1::text[])
        ORDER BY s.id`,
      [instances.map((i) => i.serverId)],
    );
    const found: Finding[] = [];
    const known = new Set<string>();
    for (const s of servers) {
      known.add(s.id);
      if (s.busy) continue;
      const instance = byServer.get(s.id);
      const details = {
        org_id: s.org_id, status: s.status, ipv4: s.ipv4, instance_id: instance?.instanceId ?? null, instance_ipv4: instance?.ipv4 ?? null, instance_power: instance?.power ?? null,
      };
      if (s.deleted) {
        if (instance) found.push({ subject: s.id, message: `server is deleted but its instance ${instance.instanceId} still exists at the provider`, details });
      } else if (s.status !== 'creating') {
        if (!instance) found.push({ subject: s.id, message: `${s.status} server has no instance at the provider`, details });
        else if (instance.ipv4 !== s.ipv4) found.push({ subject: s.id, message: `server has ipv4 ${s.ipv4 ?? 'none'} but its instance has ${instance.ipv4}`, details });
        else if (POWER[s.status] && instance.power !== POWER[s.status]) {
          found.push({ subject: s.id, message: `${s.status} server's instance is ${instance.power} at the provider`, details });
        } else if (s.vcpus !== null && (instance.vcpus !== s.vcpus || instance.memoryGb !== s.memory_gb || instance.diskGb !== s.disk_gb || instance.image !== s.image)) {
          // A plan change or a rebuild recorded on one side only (seeded servers have no plan: not compared).
          const spec = (v: number | null, m: number | null, d: number | null, i: string | null) => `${v} vCPUs, ${m} GB, ${d} GB disk, ${i}`;
          found.push({
            subject: s.id,
            message: `server has ${spec(s.vcpus, s.memory_gb, s.disk_gb, s.image)} but its instance ${spec(instance.vcpus, instance.memoryGb, instance.diskGb, instance.image)}`,
            details,
          });
        }
      }
    }
    for (const i of instances) {
      if (!known.has(i.serverId)) {
        found.push({ subject: i.serverId, message: `the provider holds instance ${i.instanceId} of a server that does not exist`, details: { instance_id: i.instanceId, instance_ipv4: i.ipv4 } });
      }
    }
    return found;
  }
}
