import { Injectable } from '@nestjs/common';
import { OrphanSweep } from '../../operations/application/orphan-sweep';
import { ComputeGateway } from './compute-gateway';
import { ProviderInstance } from './compute-provider.port';
import { OrphanInstanceServers } from './orphan-instances.port';

/**
 * A failed purchase deletes the instance the provider made for it (its compensation), and a
 * deletion deletes it as its last step; when the provider cannot be reached then, or the process
 * dies first, the instance stays. This sweep, run every ORPHAN_INSTANCE_SWEEP_INTERVAL_MS by the
 * worker processes (CleanUpOrphanInstancesJob), deletes at the provider every instance whose server
 * is deleted (or unknown) and has no unfinished operation naming it; `cli verify`
 * (provider.instances_match_servers) reports such an instance until it has run.
 *
 * The loop is OrphanSweep's (a page of ComputeProvider.listInstances at a time, no database
 * connection held while it calls the provider, stops between two instances once told). Each
 * delete's step is `orphan-cleanup/<instance id>`. Returns how many instances it deleted.
 */
@Injectable()
export class CleanUpOrphanInstances extends OrphanSweep<ProviderInstance> {
  constructor(compute: ComputeGateway, servers: OrphanInstanceServers) {
    super('CleanUpOrphanInstances', {
      deleted: 'deleted the instance of a deleted server at the provider',
      failed: 'could not delete an orphan instance; the next sweep tries again',
      list: (page) => compute.listInstances(page),
      key: (instance) => instance.serverId,
      goneAmong: (serverIds) => servers.goneAmong(serverIds),
      remove: (instance) => compute.deleteInstance({ serverId: instance.serverId, step: `orphan-cleanup/${instance.instanceId}` }),
      fields: (instance) => ({ server_id: instance.serverId, instance_id: instance.instanceId }),
    });
  }
}
