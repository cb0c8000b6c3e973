import { Injectable, Logger } from '@nestjs/common';
import { ComputeGateway } from './compute-gateway';
import { OrphanInstanceServers } from './orphan-instances.port';

/** Instances the sweep reads from the provider at a time (one page of ComputeProvider.listInstances). */
export const ORPHAN_INSTANCE_SWEEP_PAGE = 500;

/**
 * A failed purchase deletes the instance the provider made for it (its compensation), and a
 * deletion deletes it as its last step; when the provider cannot be reached then, or the process
 * dies first, the instance stays. This sweep, run every ORPHAN_INSTANCE_SWEEP_INTERVAL_MS by the
 * worker processes (CleanUpOrphanInstancesJob), deletes at the provider every instance whose server
 * is deleted (or unknown) and has no unfinished operation naming it; `cli verify`
 * (provider.instances_match_servers) reports such an instance until it has run.
 *
 * It walks the provider's instances a page at a time, holds no database connection while it calls
 * the provider, and stops between two instances once `stopping()` says so. Each delete's step is
 * `orphan-cleanup/<instance id>`. Returns how many instances it deleted.
 */
@Injectable()
export class CleanUpOrphanInstances {
  private readonly logger = new Logger('CleanUpOrphanInstances');

  constructor(
    private readonly compute: ComputeGateway,
    private readonly servers: OrphanInstanceServers,
  ) {}

  async execute(stopping: () => boolean = () => false, pageSize = ORPHAN_INSTANCE_SWEEP_PAGE): Promise<number> {
    let deleted = 0;
    let after: string | undefined;
    while (!stopping()) {
      const instances = await this.compute.listInstances({ after, limit: pageSize });
      if (instances.length === 0) break;
      after = instances[instances.length - 1].serverId;
      const gone = new Set(await this.servers.goneAmong(instances.map((i) => i.serverId)));
      for (const instance of instances.filter((i) => gone.has(i.serverId))) {
        if (stopping()) break;
        try {
          await this.compute.deleteInstance({ serverId: instance.serverId, step: `orphan-cleanup/${instance.instanceId}` });
          deleted += 1;
          this.logger.log({ msg: 'deleted the instance of a deleted server at the provider', server_id: instance.serverId, instance_id: instance.instanceId });
        } catch (err) {
          this.logger.warn({
            msg: 'could not delete an orphan instance; the next sweep tries again',
            server_id: instance.serverId,
            err: err instanceof Error ? err.message : String(err),
          });
        }
      }
      if (instances.length < pageSize) break;
    }
    return deleted;
  }
}
