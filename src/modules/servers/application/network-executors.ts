import { Injectable } from '@nestjs/common';
import { Clock } from '../../../shared/kernel/clock/clock';
import { OperationExecutors, OperationStepExecutor } from '../../operations/application/operation-executors';
import { ProviderTruth, readProviderTruth } from '../../operations/application/provider-truth';
import { Operation, OperationError } from '../../operations/domain/operation';
import { ComputeGateway } from './compute-gateway';
import { ProviderAddresses } from './compute-provider.port';
import { attachParams } from './networks.use-cases';
import { Networks } from './networks.port';
import { ServerExecutor, key, serverIdOf } from './server-executors';
import { ServerLifecycle } from './server-lifecycle.port';

/** Whether the provider holds the server in the network with that address. */
const holds = (truth: ProviderTruth<unknown> | undefined, networkId: string): { known: boolean; ip?: string } => {
  if (!truth?.known) return { known: false };
  const addresses = truth.value as ProviderAddresses | null;
  return { known: true, ip: addresses?.networks.find((n) => n.networkId === networkId)?.ip };
};

@Injectable()
abstract class NetworkExecutor extends ServerExecutor {
  constructor(
    lifecycle: ServerLifecycle,
    compute: ComputeGateway,
    executors: OperationExecutors,
    clock: Clock,
    protected readonly networks: Networks,
  ) {
    super(lifecycle, compute, executors, clock);
  }

  /** The provider's truth about the server's attachments (read before a failed operation gives anything back). */
  observe(op: Operation): Promise<ProviderTruth<unknown>> {
    return readProviderTruth(() => this.compute.getAddresses(serverIdOf(op)));
  }

  /**
   * Failure: the attachment follows the provider's truth: held there, it is `attached` (with the
   * provider's address); not held, it goes. Unreadable: it stays `attaching` or `detaching` for
   * the reconciliation sweep (never concluded as "nothing happened").
   */
  async failed(op: Operation, _error: OperationError, truth?: ProviderTruth<unknown>): Promise<void> {
    const p = attachParams.read(op.params);
    const server = await this.lifecycle.lock(serverIdOf(op));
    if (!server || server.deletedAt) return;
    const held = holds(truth, p.networkId);
    if (!held.known) return;
    if (held.ip === undefined) {
      await this.networks.remove(server.id, p.networkId);
      return;
    }
    if (held.ip !== p.ip) await this.networks.setAddress(server.id, p.networkId, held.ip);
    await this.networks.setStatus(server.id, p.networkId, 'attached');
  }
}

/** vm.attach_network: attaching_network (the provider attaches the instance with the address held at acceptance; then `attached`). */
@Injectable()
export class AttachNetworkExecutor extends NetworkExecutor {
  readonly type = 'vm.attach_network' as const;
  readonly steps: readonly OperationStepExecutor[] = [
    {
      name: 'attaching_network',
      perform: async (op) => {
        const p = attachParams.read(op.params);
        const made = await this.compute.attachNetwork({ serverId: serverIdOf(op), step: key(op, 'attaching_network'), networkId: p.networkId, ipRange: p.ipRange, ip: p.ip });
        return { ip: made.ip };
      },
      commit: async (op) => {
        const p = attachParams.read(op.params);
        const server = await this.lockServer(op);
        await this.networks.setStatus(server.id, p.networkId, 'attached');
        return { server_id: server.id, network_id: p.networkId, ip: p.ip };
      },
    },
  ];
}

/** vm.detach_network: detaching_network (the provider detaches the instance; then the attachment goes and its address is free). */
@Injectable()
export class DetachNetworkExecutor extends NetworkExecutor {
  readonly type = 'vm.detach_network' as const;
  readonly steps: readonly OperationStepExecutor[] = [
    this.call(
      'detaching_network',
      (op, serverId, step) => this.compute.detachNetwork({ serverId, step, networkId: attachParams.read(op.params).networkId }),
      async (op) => {
        const p = attachParams.read(op.params);
        const server = await this.lockServer(op);
        await this.networks.remove(server.id, p.networkId);
        return { server_id: server.id, network_id: p.networkId, ip: p.ip };
      },
    ),
  ];
}
