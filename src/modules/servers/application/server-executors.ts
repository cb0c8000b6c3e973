import { Injectable, OnModuleInit } from '@nestjs/common';
import { FirewallEnforcement } from '../../access/application/firewall-enforcement';
import { Clock, addMonthsClamped } from '../../../shared/kernel/clock/clock';
import { DomainError, invalidState } from '../../../shared/kernel/errors/domain-error';
import { OperationExecutor, OperationExecutors, OperationStepExecutor } from '../../operations/application/operation-executors';
import { ProviderTruth, readProviderTruth } from '../../operations/application/provider-truth';
import { JsonObject, Operation, OperationError } from '../../operations/domain/operation';
import { Server, ServerStatus } from '../domain/server';
import { POWER_ACTIONS, PowerAction } from '../domain/server-actions';
import { ComputeGateway } from './compute-gateway';
import { ProviderInstance } from './compute-provider.port';
import { renewalParams } from '../../prepaid/application/renewal-params';
import { renewedExpiry } from '../../prepaid/domain/term';
import { createServerParams, powerParams } from './server-operation-params';
import { rebuildServerParams, resizeServerParams } from './server-change-params';
import { ServerLifecycle } from './server-lifecycle.port';
import { ServerReads } from './servers.port';
import { EventOutbox } from '../../webhooks/application/event-outbox.port';
import { presentServer } from '../domain/server-json';

/**
 * The worker's executors of vm.create, vm.start, vm.stop, vm.reboot and vm.renew (servers.md
 * "The compute provider and the operations"). Each step that changes the instance calls the
 * compute provider in `perform` (outside any transaction, through the ComputeGateway and its
 * circuit), then `commit` records on the server row, in the step's short transaction, what the
 * provider now holds. The provider's idempotency key of a call is (server id, `<operation
 * id>/<step>`): a step run again never creates, powers or reboots twice.
 */
export const key = (op: Operation, step: string): string => `${op.id}/${step}`;

/** vm.renew of a suspended server: whether `resuming` powers it on. */
const resumeOf = (op: Operation): { powerOn: boolean } | undefined => {
  const resume = op.params.resume as { power_on?: unknown } | undefined;
  return resume && typeof resume === 'object' ? { powerOn: resume.power_on === true } : undefined;
};

export const serverIdOf = (op: Operation): string => {
  const id = op.snapshot().vmId;
  if (!id) throw invalidState(`Operation ${op.id} names no server`);
  return id;
};

@Injectable()
export abstract class ServerExecutor implements OperationExecutor, OnModuleInit {
  abstract readonly type: OperationExecutor['type'];
  abstract readonly steps: readonly OperationStepExecutor[];

  constructor(
    protected readonly lifecycle: ServerLifecycle,
    protected readonly compute: ComputeGateway,
    protected readonly executors: OperationExecutors,
    protected readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    this.executors.register(this);
  }

  /** The operation's server, locked until the step's transaction ends; a deleted one fails the operation. */
  protected async lockServer(op: Operation): Promise<Server> {
    const server = await this.lifecycle.lock(serverIdOf(op));
    if (!server || server.deletedAt) throw invalidState(`Server ${serverIdOf(op)} is deleted`);
    return server;
  }

  /** A step that only calls the provider (its commit records nothing). */
  protected call(name: string, work: (op: Operation, serverId: string, step: string) => Promise<unknown>, commit?: OperationStepExecutor['commit']): OperationStepExecutor {
    return {
      name,
      perform: async (op) => {
        await work(op, serverIdOf(op), key(op, name));
        return {};
      },
      commit: commit ?? (async () => undefined),
    };
  }

  /** The provider's truth about the server's instance (read before a failed operation gives anything back). */
  observe(op: Operation): Promise<ProviderTruth<unknown>> {
    return readProviderTruth(() => this.compute.getInstance(serverIdOf(op)));
  }
}

/**
 * vm.create: payment_reserved (done at acceptance), creating_instance (user_data removed from
 * the params once it has succeeded), booting (then the firewall rules in force applied), ready (the instance read back: `running`, its
 * ipv4, expires_at = now + term with the month-end clamp; the worker captures the hold in the
 * same transaction). Failure of any step: the server `deleted` (its vCPUs back through the
 * counter's trigger, no ipv4), user_data forgotten, the hold released by the worker; then the
 * instance, if any was made, deleted at the provider (compensate). When the provider cannot be
 * reached for that, the instance is left to the orphan sweep, which deletes instances whose
 * server is deleted: never concluded as "nothing was made".
 */
@Injectable()
export class CreateServerExecutor extends ServerExecutor {
  readonly type = 'vm.create' as const;

  constructor(
    lifecycle: ServerLifecycle,
    compute: ComputeGateway,
    executors: OperationExecutors,
    clock: Clock,
    private readonly firewall: FirewallEnforcement,
    private readonly reads: ServerReads,
  ) {
    super(lifecycle, compute, executors, clock);
  }

  readonly steps: readonly OperationStepExecutor[] = [
    { name: 'payment_reserved', commit: async () => undefined },
    {
      name: 'creating_instance',
      perform: async (op) => {
        const p = createServerParams.read(op.params);
        // The instance's hostname is the server's name (servers.md: "Name (the hostname)").
        const server = await this.reads.findInOrg(op.orgId, serverIdOf(op));
        const instance = await this.compute.createInstance({
          serverId: serverIdOf(op),
          step: key(op, 'creating_instance'),
          hostname: server?.name,
          zoneId: p.zoneId,
          vcpus: p.vcpus,
          memoryGb: p.memoryGb,
          diskGb: p.diskGb,
          image: p.image,
          sshPublicKeys: p.sshKeys.map((k) => k.publicKey),
          userData: p.userData,
        });
        // Its /64 routed to it (the address chosen from the region's prefix when the server was stored).
        if (server?.ipv6) await this.compute.assignIpv6({ serverId: serverIdOf(op), step: key(op, 'creating_instance/ipv6'), ipv6: server.ipv6 });
        return { instance_id: instance.instanceId };
      },
      commit: async (op) => {
        await this.lifecycle.forgetUserData(op.id);
      },
    },
    // Booted, then the rules in force applied (a new instance denies all inbound traffic until then).
    this.call('booting', async (op, serverId, step) => {
      await this.compute.awaitBoot({ serverId, step });
      await this.firewall.applyNow(op.orgId, serverId);
    }),
    {
      name: 'ready',
      perform: async (op) => {
        const instance = await this.compute.getInstance(serverIdOf(op));
        if (!instance) throw new DomainError('internal', `The instance of server ${serverIdOf(op)} is gone at the provider`);
        return { ipv4: instance.ipv4 };
      },
      commit: (op, performed) => this.ready(op, performed),
    },
  ];

  private async ready(op: Operation, performed: JsonObject | undefined): Promise<JsonObject> {
    const p = createServerParams.read(op.params);
    const server = await this.lockServer(op);
    if (server.status !== 'creating') throw invalidState(`Server ${server.id} is ${server.status}, not creating`);
    const ipv4 = performed?.ipv4;
    if (typeof ipv4 !== 'string') throw new DomainError('internal', `The instance of server ${server.id} has no IPv4 address`);
    const expiresAt = addMonthsClamped(this.clock.now(), p.termMonths);
    await this.lifecycle.markReady(server.id, ipv4, expiresAt);
    return { server_id: server.id, ipv4, expires_at: expiresAt.toISOString(), charged: { currency: p.amount.currency, amount: p.amount.format() } };
  }

  async failed(op: Operation): Promise<void> {
    await this.lifecycle.forgetUserData(op.id);
    const server = await this.lifecycle.lock(serverIdOf(op));
    if (server && !server.deletedAt) await this.lifecycle.markDeleted(server.id, this.clock.now());
  }

  async compensate(op: Operation): Promise<void> {
    await this.compute.deleteInstance({ serverId: serverIdOf(op), step: key(op, 'compensate') });
  }
}

/**
 * vm.start, vm.stop and vm.reboot: the server shows the status of servers.md's table at
 * acceptance and at success. On failure it shows what the provider holds (the instance powered
 * on: running; off: stopped) when the provider can be read, else the table's failure status.
 */
@Injectable()
abstract class PowerExecutor extends ServerExecutor {
  abstract readonly type: PowerAction;

  protected async reached(op: Operation, status: ServerStatus, extra: JsonObject): Promise<JsonObject> {
    const server = await this.lockServer(op);
    await this.lifecycle.setStatus(server.id, status);
    return { server_id: server.id, status, ...extra };
  }

  async failed(op: Operation, _error: OperationError, truth?: ProviderTruth<unknown>): Promise<void> {
    const server = await this.lifecycle.lock(serverIdOf(op));
    if (!server || server.deletedAt) return;
    const instance = truth?.known ? (truth.value as ProviderInstance | null) : undefined;
    const status: ServerStatus = instance ? (instance.power === 'running' ? 'running' : 'stopped') : POWER_ACTIONS[this.type].failure;
    if (server.status !== status) await this.lifecycle.setStatus(server.id, status);
  }
}

/** vm.start: powering_on, booting → running. */
@Injectable()
export class StartServerExecutor extends PowerExecutor {
  readonly type = 'vm.start' as const;
  readonly steps: readonly OperationStepExecutor[] = [
    this.call('powering_on', (_op, serverId, step) => this.compute.powerOn({ serverId, step })),
    this.call('booting', (_op, serverId, step) => this.compute.awaitBoot({ serverId, step }), (op) => this.reached(op, 'running', {})),
  ];
}

/** vm.stop: shutting_down (ACPI; a guest that does not halt in 120 s fails it: invalid_state) or, with force, powering_off → stopped. */
@Injectable()
export class StopServerExecutor extends PowerExecutor {
  readonly type = 'vm.stop' as const;
  readonly steps: readonly OperationStepExecutor[] = [
    this.call('shutting_down', (_op, serverId, step) => this.compute.shutdown({ serverId, step }), (op) => this.reached(op, 'stopped', { forced: false })),
    this.call('powering_off', (_op, serverId, step) => this.compute.powerOff({ serverId, step }), (op) => this.reached(op, 'stopped', { forced: true })),
  ];
}

/** vm.reboot: rebooting (ACPI) or, with hard, resetting; booting → running. */
@Injectable()
export class RebootServerExecutor extends PowerExecutor {
  readonly type = 'vm.reboot' as const;
  readonly steps: readonly OperationStepExecutor[] = [
    this.call('rebooting', (_op, serverId, step) => this.compute.reboot({ serverId, step })),
    this.call('resetting', (_op, serverId, step) => this.compute.reset({ serverId, step })),
    this.call('booting', (_op, serverId, step) => this.compute.awaitBoot({ serverId, step }), (op) => this.reached(op, 'running', { hard: powerParams.read(op.params) })),
  ];
}

/**
 * vm.renew: `renewing`, with no provider call: lock the server, extend it (max(expires_at, now) +
 * term, month-end clamp), set term and billing; the worker captures the hold in the same
 * transaction. A server deleted meanwhile fails it (hold released).
 *
 * A suspended server's renewal (terms.md) has a second step, `resuming`: the instance powered on
 * again (and booted) when the server ran before its suspension, else left off; then, in the last
 * step's transaction, the term extended and the server `running` or `stopped` (its suspension
 * times cleared), the event server.resumed. Until that commit nothing is written, so a failure
 * releases the hold and leaves the server suspended; a step run again asks the provider again
 * under the same key (its answer is the provider's truth).
 */
@Injectable()
export class RenewServerExecutor implements OperationExecutor, OnModuleInit {
  readonly type = 'vm.renew' as const;
  readonly steps: readonly OperationStepExecutor[] = [
    { name: 'renewing', commit: async (op) => (resumeOf(op) ? undefined : this.renew(op)) },
    {
      name: 'resuming',
      perform: async (op) => {
        if (resumeOf(op)?.powerOn) {
          const serverId = serverIdOf(op);
          await this.compute.powerOn({ serverId, step: key(op, 'resuming') });
          await this.compute.awaitBoot({ serverId, step: key(op, 'resuming/boot') });
        }
        return {};
      },
      commit: (op) => this.renew(op),
    },
  ];

  constructor(
    private readonly lifecycle: ServerLifecycle,
    private readonly executors: OperationExecutors,
    private readonly clock: Clock,
    private readonly compute: ComputeGateway,
    private readonly outbox: EventOutbox,
    private readonly reads: ServerReads,
  ) {}

  onModuleInit(): void {
    this.executors.register(this);
  }

  private async renew(op: Operation): Promise<JsonObject> {
    const p = renewalParams.read(op.params, 'vm.renew');
    const server = await this.lifecycle.lock(serverIdOf(op));
    if (!server || server.deletedAt) throw invalidState(`Server ${serverIdOf(op)} is deleted and cannot be renewed`);
    const expiresAt = renewedExpiry(server.expiresAt, this.clock.now(), p.termMonths);
    await this.lifecycle.renew(server.id, p.termMonths, p.amount, expiresAt);
    const resume = resumeOf(op);
    if (resume) {
      if (server.status !== 'suspended') throw invalidState(`Server ${server.id} is ${server.status}, not suspended`);
      await this.lifecycle.setStatus(server.id, resume.powerOn ? 'running' : 'stopped');
      const resumed = await this.reads.findInOrg(server.orgId, server.id);
      if (resumed) await this.outbox.record({ orgId: server.orgId, type: 'server.resumed', createdAt: this.clock.now(), data: presentServer(resumed) });
    }
    return { server_id: server.id, term_months: p.termMonths, expires_at: expiresAt.toISOString(), charged: { currency: p.amount.currency, amount: p.amount.format() } };
  }
}

/**
 * vm.resize: payment_reserved (done at acceptance: the hold, and the vCPUs the plan adds reserved),
 * resizing (the provider gives the stopped instance the plan's resources; then, in the step's
 * transaction, the server gets the plan, its specs and its current price as the frozen price, the
 * reservation ends and vCPUs a smaller plan frees go back; the worker captures the hold).
 *
 * Failure: the hold released; what is given back follows the provider's truth (a resize that took
 * effect is never given back): the instance has the plan's resources, the server takes the plan
 * (nothing charged for a failed operation); it has not, the reserved vCPUs go back; the provider
 * unreadable, the reservation stays until a later read settles it.
 */
@Injectable()
export class ResizeServerExecutor extends ServerExecutor {
  readonly type = 'vm.resize' as const;
  readonly steps: readonly OperationStepExecutor[] = [
    { name: 'payment_reserved', commit: async () => undefined },
    {
      name: 'resizing',
      perform: async (op) => {
        const p = resizeServerParams.read(op.params);
        await this.compute.resizeInstance({ serverId: serverIdOf(op), step: key(op, 'resizing'), vcpus: p.vcpus, memoryGb: p.memoryGb, diskGb: p.diskGb });
        return {};
      },
      commit: async (op) => {
        const p = resizeServerParams.read(op.params);
        const server = await this.lockServer(op);
        await this.lifecycle.changePlan(server.id, { planId: p.planId, vcpus: p.vcpus, memoryGb: p.memoryGb, diskGb: p.diskGb, price: p.price });
        return {
          server_id: server.id, plan: p.planId, vcpus: p.vcpus, memory_gb: p.memoryGb, disk_gb: p.diskGb,
          charged: { currency: p.amount.currency, amount: p.amount.format() },
        };
      },
    },
  ];

  async failed(op: Operation, _error: OperationError, truth?: ProviderTruth<unknown>): Promise<void> {
    const p = resizeServerParams.read(op.params);
    const server = await this.lifecycle.lock(serverIdOf(op));
    if (!server || server.deletedAt || !truth?.known) return;
    const instance = truth.value as ProviderInstance | null;
    if (instance && instance.vcpus === p.vcpus && instance.memoryGb === p.memoryGb && instance.diskGb === p.diskGb) {
      await this.lifecycle.changePlan(server.id, { planId: p.planId, vcpus: p.vcpus, memoryGb: p.memoryGb, diskGb: p.diskGb, price: p.price });
    } else {
      await this.lifecycle.releaseVcpus(server.id);
    }
  }
}

/**
 * vm.rebuild: rebuilding (the provider reinstalls the boot disk from the image with the SSH keys
 * and user_data, and powers the instance on; then the server records the image and keys and
 * user_data is removed from the params), booting (booted, the firewall rules in force applied;
 * the server `running`). Nothing is charged. Failure: user_data forgotten; the server shows the
 * instance's power as the provider holds it (else it keeps its status).
 */
@Injectable()
export class RebuildServerExecutor extends ServerExecutor {
  readonly type = 'vm.rebuild' as const;

  constructor(
    lifecycle: ServerLifecycle,
    compute: ComputeGateway,
    executors: OperationExecutors,
    clock: Clock,
    private readonly firewall: FirewallEnforcement,
  ) {
    super(lifecycle, compute, executors, clock);
  }

  readonly steps: readonly OperationStepExecutor[] = [
    {
      name: 'rebuilding',
      perform: async (op) => {
        const p = rebuildServerParams.read(op.params);
        await this.compute.rebuildInstance({
          serverId: serverIdOf(op), step: key(op, 'rebuilding'), image: p.image, sshPublicKeys: p.sshKeys.map((k) => k.publicKey), userData: p.userData,
        });
        return {};
      },
      commit: async (op) => {
        const p = rebuildServerParams.read(op.params);
        const server = await this.lockServer(op);
        await this.lifecycle.rebuilt(server.id, p.image, p.sshKeys.map((k) => k.id));
        await this.lifecycle.forgetUserData(op.id);
      },
    },
    this.call(
      'booting',
      async (op, serverId, step) => {
        await this.compute.awaitBoot({ serverId, step });
        await this.firewall.applyNow(op.orgId, serverId);
      },
      async (op) => {
        const p = rebuildServerParams.read(op.params);
        const server = await this.lockServer(op);
        await this.lifecycle.setStatus(server.id, 'running');
        return { server_id: server.id, image: p.image, status: 'running' };
      },
    ),
  ];

  async failed(op: Operation, _error: OperationError, truth?: ProviderTruth<unknown>): Promise<void> {
    await this.lifecycle.forgetUserData(op.id);
    const server = await this.lifecycle.lock(serverIdOf(op));
    if (!server || server.deletedAt || !truth?.known) return;
    const instance = truth.value as ProviderInstance | null;
    if (instance?.image) await this.lifecycle.rebuilt(server.id, instance.image, server.sshKeyIds);
    const status: ServerStatus | undefined = instance ? (instance.power === 'running' ? 'running' : 'stopped') : undefined;
    if (status && server.status !== status) await this.lifecycle.setStatus(server.id, status);
  }
}
