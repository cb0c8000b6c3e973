import { Inject, Injectable, Logger } from '@nestjs/common';
import { UnitOfWork, WorkerUnitOfWork } from '../../../shared/database/unit-of-work';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { OperationRepository } from '../../operations/application/operations.port';
import { ComputeGateway } from './compute-gateway';
import { ProviderInstance } from './compute-provider.port';
import { DeleteServerExecutor } from './delete-server.executor';
import { ServerDeletions } from './server-deletions.port';
import { ServerReads } from './servers.port';

/** Servers read per page of the sweep. */
export const DELETING_SWEEP_PAGE = 100;

/**
 * The reconciliation of deletions left unsettled: a vm.delete that failed after
 * `deleting_instance` was tried while the compute provider could not be read leaves its server
 * `deleting` (never concluded as "nothing happened"). Every RECONCILE_SWEEP_INTERVAL_MS the
 * worker processes read each such server's instance again (ComputeGateway.getInstance, no
 * transaction held) and settle it under the server's lock, as the failed deletion would have
 * with the provider readable: the instance gone, the server `deleted` (vCPUs back, its own
 * firewall rules deleted, server.deleted); still there, its former status back. Each settlement
 * is audited `server.reconciled` (actor system). A server whose instance still cannot be read is
 * left for the next sweep. Returns how many servers it settled.
 */
@Injectable()
export class ReconcileDeletingServers {
  private readonly logger = new Logger('ReconcileDeletingServers');

  constructor(
    private readonly deletions: ServerDeletions,
    private readonly reads: ServerReads,
    private readonly operations: OperationRepository,
    private readonly compute: ComputeGateway,
    private readonly executor: DeleteServerExecutor,
    private readonly audit: AuditTrail,
    @Inject(WorkerUnitOfWork) private readonly uow: UnitOfWork,
  ) {}

  async execute(stopping: () => boolean = () => false, pageSize = DELETING_SWEEP_PAGE): Promise<number> {
    let settled = 0;
    let after = '';
    while (!stopping()) {
      const page = await this.deletions.unsettledAfter(after, pageSize);
      if (page.length === 0) break;
      after = page[page.length - 1].serverId;
      for (const entry of page) {
        if (stopping()) break;
        try {
          if (await this.settle(entry)) settled += 1;
        } catch (err) {
          this.logger.warn({ msg: 'could not settle a deleting server; the next sweep tries again', server_id: entry.serverId, err: err instanceof Error ? err.message : String(err) });
        }
      }
      if (page.length < pageSize) break;
    }
    return settled;
  }

  /** One server: read its instance (no transaction), then settle it under its lock if it is still unsettled. */
  async settle(entry: { serverId: string; orgId: string; operationId: string }): Promise<boolean> {
    const instance: ProviderInstance | null = await this.compute.getInstance(entry.serverId);
    return this.uow.run(async () => {
      await this.deletions.lockServer(entry.serverId);
      const server = await this.reads.findInOrg(entry.orgId, entry.serverId);
      if (!server || server.deletedAt || server.status !== 'deleting') return false;
      if (await this.deletions.unfinishedOperation(entry.serverId)) return false;
      const op = await this.operations.findInOrg(entry.orgId, entry.operationId);
      if (!op || op.type !== 'vm.delete' || !op.isFinished()) return false;
      const outcome = await this.executor.settleFromInstance(op, instance);
      const after = (await this.reads.findInOrg(entry.orgId, entry.serverId))!;
      await this.audit.record({
        orgId: entry.orgId,
        actorType: 'system',
        actorId: null,
        action: 'server.reconciled',
        targetId: entry.serverId,
        ipAddress: null,
        requestId: null,
        data: {
          operation_id: op.id,
          reason: outcome === 'deleted' ? 'the instance was deleted at the provider' : 'the instance is still at the provider',
          from: { status: 'deleting' },
          to: { status: after.status },
        },
      });
      this.logger.log({ msg: 'settled a deleting server from its instance at the provider', server_id: entry.serverId, outcome });
      return true;
    });
  }
}
