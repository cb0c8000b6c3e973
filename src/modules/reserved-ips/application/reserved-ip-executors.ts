import { Injectable, OnModuleInit } from '@nestjs/common';
import { Settings } from '../../../shared/config/settings';
import { Clock, addMonthsClamped } from '../../../shared/kernel/clock/clock';
import { invalidState } from '../../../shared/kernel/errors/domain-error';
import { OperationExecutor, OperationExecutors, OperationStepExecutor } from '../../operations/application/operation-executors';
import { ProviderTruth, readProviderTruth } from '../../operations/application/provider-truth';
import { JsonObject, Operation } from '../../operations/domain/operation';
import { announceCopy, commitRenewal, lockOperationCopy } from '../../prepaid/application/copy-executors';
import { ComputeGateway } from '../../servers/application/compute-gateway';
import { ProviderAddress } from '../../servers/application/compute-provider.port';
import { EventOutbox } from '../../webhooks/application/event-outbox.port';
import { ReservedIp, presentReservedIp } from '../domain/reserved-ip';
import { reservedIpParams } from './reserved-ip-params';
import { ReservedIpRepository } from './reserved-ips.port';

/** The provider's idempotency key of a step's call: `<operation id>/<step>`. */
const key = (op: Operation, step: string): string => `${op.id}/${step}`;

/**
 * The executors' shared plumbing: the reservation of an operation, locked; the provider's calls;
 * its release. (Injectable: its constructor's types are the subclasses'.)
 */
@Injectable()
abstract class ReservedIpExecutor implements OperationExecutor, OnModuleInit {
  abstract readonly type: 'ip.reserve' | 'ip.assign' | 'ip.unassign' | 'ip.renew' | 'ip.release';
  abstract readonly steps: readonly OperationStepExecutor[];

  constructor(
    protected readonly rows: ReservedIpRepository,
    protected readonly compute: ComputeGateway,
    protected readonly outbox: EventOutbox,
    protected readonly settings: Settings,
    protected readonly clock: Clock,
    private readonly executors: OperationExecutors,
  ) {}

  onModuleInit(): void {
    this.executors.register(this);
  }

  protected async locked(op: Operation): Promise<ReservedIp> {
    return lockOperationCopy(this.rows, op, reservedIpParams.read(op.params).reservedIpId, 'Reserved IP');
  }

  /** The reservation of the operation, locked, when the operation is still its own (undefined otherwise). */
  protected async ownLocked(op: Operation): Promise<ReservedIp | undefined> {
    const r = await this.rows.lock(reservedIpParams.read(op.params).reservedIpId);
    return r && r.operationId === op.id ? r : undefined;
  }

  /**
   * The `assigning` step: the compute provider routes the address to the operation's server;
   * committed, the reservation is `assigned` to it and `result` gives the operation's result.
   */
  protected assigning(result: (op: Operation, r: ReservedIp) => JsonObject): OperationStepExecutor {
    return {
      name: 'assigning',
      perform: async (op) => {
        const p = reservedIpParams.read(op.params);
        const a = await this.compute.assignAddress({ addressId: p.reservedIpId, step: key(op, 'assigning'), ip: p.ip, serverId: p.serverId! });
        return { server_id: a.serverId };
      },
      commit: async (op) => {
        const p = reservedIpParams.read(op.params);
        const r = await this.locked(op);
        await this.rows.markAssigned(r.id, p.serverId!);
        return result(op, r);
      },
    };
  }

  /** The `unassigning` step's call: the compute provider routes the address to nothing. */
  protected async unassignAtProvider(op: Operation): Promise<JsonObject> {
    const p = reservedIpParams.read(op.params);
    await this.compute.unassignAddress({ addressId: p.reservedIpId, step: key(op, 'unassigning'), ip: p.ip });
    return {};
  }


  /** Released (its address back in the pool after `cooldownS`) and announced: reserved_ip.released with its released_reason. */
  protected async released(r: ReservedIp, reason: 'customer' | 'expired' | 'purchase_failed', cooldownS: number): Promise<void> {
    const now = this.clock.now();
    await this.rows.markReleased(r.id, now, reason, new Date(now.getTime() + cooldownS * 1000));
    if (reason === 'purchase_failed') return;
    await announceCopy(this.rows, this.outbox, r, { type: 'reserved_ip.released', now, present: presentReservedIp });
  }
}

/** The executors whose steps route the address at the compute provider: what the provider holds decides their failures. */
abstract class RoutingIpExecutor extends ReservedIpExecutor {
  observe(op: Operation): Promise<ProviderTruth<ProviderAddress | null>> {
    return readProviderTruth(() => this.compute.getAddress(reservedIpParams.read(op.params).reservedIpId));
  }

  /** Where the provider's truth says the address is routed: undefined when unreadable, null when the provider holds no such address. */
  protected seen(truth: ProviderTruth<unknown> | undefined): ProviderAddress | null | undefined {
    return truth?.known ? (truth.value as ProviderAddress | null) : undefined;
  }
}

/**
 * ip.reserve: `payment_reserved` (done at acceptance), `allocating` (no provider call: the address
 * was taken from the pool at acceptance; `available`, `expires_at` = now + term), and with a
 * server `assigning`: the compute provider routes the address to it (`assigned`). The hold is
 * captured by the engine on success. Failure: the address routed to nothing at the provider
 * (compensate), the reservation `released` (purchase_failed, the address back in the pool at
 * once), the hold released.
 */
@Injectable()
export class ReserveIpExecutor extends RoutingIpExecutor {
  readonly type = 'ip.reserve' as const;
  readonly steps: readonly OperationStepExecutor[] = [
    { name: 'payment_reserved', commit: async () => undefined },
    { name: 'allocating', commit: (op) => this.allocated(op) },
    this.assigning((op, r) => this.result(op, r.expiresAt)),
  ];

  private async allocated(op: Operation): Promise<JsonObject | void> {
    const p = reservedIpParams.read(op.params);
    const r = await this.locked(op);
    if (r.status !== 'allocating') throw invalidState(`Reserved IP ${r.id} is ${r.status}, not allocating`);
    if (!p.termMonths) throw invalidState(`Operation ${op.id} names no term`);
    const expiresAt = addMonthsClamped(this.clock.now(), p.termMonths);
    await this.rows.markAllocated(r.id, expiresAt, p.serverId === null);
    // With a server, `assigning` follows and gives the result.
    if (p.serverId === null) return this.result(op, expiresAt);
  }

  private result(op: Operation, expiresAt: Date): JsonObject {
    const p = reservedIpParams.read(op.params);
    return {
      reserved_ip_id: p.reservedIpId,
      ip: p.ip,
      server_id: p.serverId,
      expires_at: expiresAt.toISOString(),
      charged: { currency: p.amount!.currency, amount: p.amount!.format() },
    };
  }

  async compensate(op: Operation): Promise<void> {
    const p = reservedIpParams.read(op.params);
    if (p.serverId !== null) await this.compute.unassignAddress({ addressId: p.reservedIpId, step: key(op, 'compensate'), ip: p.ip });
  }

  async failed(op: Operation): Promise<void> {
    const r = await this.rows.lock(reservedIpParams.read(op.params).reservedIpId);
    if (!r || r.status === 'released') return;
    await this.released(r, 'purchase_failed', 0);
  }
}

/**
 * ip.assign: one step, `assigning`: the compute provider routes the address to the server
 * (moving it from the one it was on). Success: `assigned` to it. Failure: what the provider holds
 * decides (routed to the server: assigned; to nothing: available; unreadable: as it was, for the
 * reconciliation sweep to settle).
 */
@Injectable()
export class AssignIpExecutor extends RoutingIpExecutor {
  readonly type = 'ip.assign' as const;
  readonly steps: readonly OperationStepExecutor[] = [
    this.assigning((op, r) => ({ reserved_ip_id: r.id, ip: r.ip, server_id: reservedIpParams.read(op.params).serverId, assigned: true })),
  ];

  async failed(op: Operation, _error: unknown, truth?: ProviderTruth<unknown>): Promise<void> {
    const r = await this.ownLocked(op);
    if (!r) return;
    const p = reservedIpParams.read(op.params);
    const seen = this.seen(truth);
    if (seen && seen.serverId === p.serverId) await this.rows.markAssigned(r.id, p.serverId!);
    else if (seen !== undefined && (seen === null || seen.serverId === null) && r.serverId !== null) await this.rows.markUnassigned(r.id);
    else await this.rows.setOperation(r.id, null);
  }
}

/**
 * ip.unassign: one step, `unassigning`: the compute provider routes the address to nothing.
 * Success: `available` (or, for the term sweep's, `suspended`). Failure: the provider's truth
 * decides (routed to nothing: as on success; still to the server, or unreadable: as it was).
 */
@Injectable()
export class UnassignIpExecutor extends RoutingIpExecutor {
  readonly type = 'ip.unassign' as const;
  readonly steps: readonly OperationStepExecutor[] = [
    {
      name: 'unassigning',
      perform: (op) => this.unassignAtProvider(op),
      commit: async (op) => {
        const r = await this.locked(op);
        await this.unassigned(op, r);
        const p = reservedIpParams.read(op.params);
        return { reserved_ip_id: r.id, ip: r.ip, server_id: p.serverId, assigned: false };
      },
    },
  ];

  private async unassigned(op: Operation, r: ReservedIp): Promise<void> {
    const p = reservedIpParams.read(op.params);
    if (p.suspend) await this.rows.markSuspended(r.id, p.suspend.at, p.suspend.releaseAt);
    else await this.rows.markUnassigned(r.id);
  }

  async failed(op: Operation, _error: unknown, truth?: ProviderTruth<unknown>): Promise<void> {
    const r = await this.ownLocked(op);
    if (!r) return;
    const seen = this.seen(truth);
    if (seen !== undefined && (seen === null || seen.serverId === null)) await this.unassigned(op, r);
    else await this.rows.setOperation(r.id, null);
  }
}

/**
 * ip.renew: one step, `renewing`, no provider call: `expires_at` = max(expires_at, now) + term,
 * term and billing set; a suspended reservation is available again (assigned to nothing).
 */
@Injectable()
export class RenewIpExecutor extends ReservedIpExecutor {
  readonly type = 'ip.renew' as const;
  readonly steps: readonly OperationStepExecutor[] = [{ name: 'renewing', commit: (op) => this.renew(op) }];

  private async renew(op: Operation): Promise<JsonObject> {
    const p = reservedIpParams.read(op.params);
    const r = await this.locked(op);
    if (r.status === 'released') throw invalidState(`Reserved IP ${r.id} is released and cannot be renewed`);
    return commitRenewal(this.rows, this.clock, op, r, p, 'reserved_ip_id');
  }

  async failed(op: Operation): Promise<void> {
    const r = await this.ownLocked(op);
    if (r) await this.rows.setOperation(r.id, null);
  }
}

/**
 * ip.release: `unassigning` (when assigned: the provider routes the address to nothing), then
 * `releasing`: `released`, the address back in its region's pool after IP_COOLDOWN_S, announced
 * (reserved_ip.released with released_reason). Failure: the provider's truth decides as for
 * ip.unassign; the reservation stays (DELETE may be sent again).
 */
@Injectable()
export class ReleaseIpExecutor extends RoutingIpExecutor {
  readonly type = 'ip.release' as const;
  readonly steps: readonly OperationStepExecutor[] = [
    {
      name: 'unassigning',
      perform: (op) => this.unassignAtProvider(op),
      commit: async (op) => {
        const r = await this.locked(op);
        // Routed to nothing now: no longer the server's (the operation goes on).
        await this.rows.markUnassigned(r.id);
        await this.rows.setOperation(r.id, op.id);
      },
    },
    {
      name: 'releasing',
      commit: async (op) => {
        const p = reservedIpParams.read(op.params);
        const r = await this.locked(op);
        await this.released(r, p.reason ?? 'customer', this.settings.ipCooldownS);
        return { reserved_ip_id: r.id, ip: r.ip, released_at: this.clock.now().toISOString() };
      },
    },
  ];

  async failed(op: Operation, _error: unknown, truth?: ProviderTruth<unknown>): Promise<void> {
    const r = await this.ownLocked(op);
    if (!r) return;
    const seen = this.seen(truth);
    if (r.serverId !== null && seen !== undefined && (seen === null || seen.serverId === null)) await this.rows.markUnassigned(r.id);
    else await this.rows.setOperation(r.id, null);
  }
}
