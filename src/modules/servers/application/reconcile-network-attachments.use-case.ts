import { Inject, Injectable, Logger } from '@nestjs/common';
import { UnitOfWork, WorkerUnitOfWork } from '../../../shared/database/unit-of-work';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { ComputeGateway } from './compute-gateway';
import { ProviderAddresses } from './compute-provider.port';
import { Attachment, Networks } from './networks.port';
import { ServerLifecycle } from './server-lifecycle.port';

/**
 * The private networks' reconciliation sweep (beside the servers' one, every
 * RECONCILE_SWEEP_INTERVAL_MS in worker processes): for each live server with an attachment in the
 * database or at the compute provider and no vm.* or template.* operation in flight, the
 * provider's attachments win. An attachment the provider holds is `attached` in the database with
 * the provider's address (an operation that failed with its answer lost left it `attaching` or
 * `detaching`, or never recorded it); one the provider does not hold is removed. Each change is
 * audited (`server.network_reconciled`, actor system, data {network_id, reason, from, to}). The
 * provider is read outside any transaction, then the repair is made under the server's row lock
 * if no operation started meanwhile. An attachment to a network the organization no longer has,
 * or at an address another server holds, is logged, never invented. Returns how many it repaired.
 */
@Injectable()
export class ReconcileNetworkAttachments {
  private readonly logger = new Logger('ReconcileNetworks');

  constructor(
    private readonly compute: ComputeGateway,
    private readonly networks: Networks,
    private readonly lifecycle: ServerLifecycle,
    private readonly audit: AuditTrail,
    @Inject(WorkerUnitOfWork) private readonly uow: UnitOfWork,
  ) {}

  async execute(stopping: () => boolean = () => false): Promise<number> {
    const held = await this.compute.listAddresses();
    const recorded = await this.uow.run(() => this.networks.all());
    const ids = [...new Set([...recorded.map((a) => a.serverId), ...held.filter((a) => a.networks.length > 0).map((a) => a.serverId)])].sort();
    let repaired = 0;
    for (const serverId of ids) {
      if (stopping()) break;
      try {
        repaired += await this.reconcile(serverId);
      } catch (err) {
        this.logger.warn({ msg: 'could not reconcile a server\'s private networks; the next sweep tries again', server_id: serverId, err: err instanceof Error ? err.message : String(err) });
      }
    }
    return repaired;
  }

  /** One server: its addresses read at the provider, then repaired under its row lock. */
  async reconcile(serverId: string): Promise<number> {
    const truth: ProviderAddresses | null = await this.compute.getAddresses(serverId);
    return this.uow.run(async () => {
      const server = await this.lifecycle.lock(serverId);
      if (!server || server.deletedAt || server.status === 'creating' || server.status === 'deleting') return 0;
      if (await this.lifecycle.unfinishedOperation(serverId)) return 0;
      const rows = await this.networks.ofServer(serverId);
      const there = new Map((truth?.networks ?? []).map((n) => [n.networkId, n.ip]));
      let changes = 0;
      const record = (networkId: string, reason: string, from: Attachment | null, to: { ip: string; status: string } | null) =>
        this.audit.record({
          orgId: server.orgId, actorType: 'system', actorId: null, action: 'server.network_reconciled', targetId: serverId, ipAddress: null, requestId: null,
          data: { network_id: networkId, reason, from: from && { ip: from.ip, status: from.status }, to },
        });
      for (const row of rows) {
        const ip = there.get(row.networkId);
        there.delete(row.networkId);
        if (ip === undefined) {
          await this.networks.remove(serverId, row.networkId);
          await record(row.networkId, 'the server is not in the network at the provider', row, null);
          changes++;
        } else if (ip !== row.ip || row.status !== 'attached') {
          if (ip !== row.ip) {
            if ((await this.networks.takenAddresses(row.networkId)).has(ip)) {
              this.logger.warn({ msg: 'the provider holds a server at an address another server holds in the database', server_id: serverId, network_id: row.networkId, ip });
              continue;
            }
            await this.networks.setAddress(serverId, row.networkId, ip);
          }
          await this.networks.setStatus(serverId, row.networkId, 'attached');
          await record(row.networkId, 'the server is in the network at the provider', row, { ip, status: 'attached' });
          changes++;
        }
      }
      for (const [networkId, ip] of there) {
        const network = await this.networks.find(server.orgId, networkId);
        if (!network || network.regionId !== server.regionId || (await this.networks.takenAddresses(networkId)).has(ip)) {
          this.logger.warn({ msg: 'the provider holds a server in a network the database cannot record', server_id: serverId, network_id: networkId, ip });
          continue;
        }
        await this.networks.reserve({ serverId, networkId, ip });
        await this.networks.setStatus(serverId, networkId, 'attached');
        await record(networkId, 'the server is in the network at the provider', null, { ip, status: 'attached' });
        changes++;
      }
      return changes;
    });
  }
}
