import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { DomainError, invalidRequest, invalidState, notFound } from '../../../shared/kernel/errors/domain-error';
import { newId } from '../../../shared/kernel/ids/ids';
import { Currency } from '../../../shared/kernel/money/money';
import { decodeCursor, encodeCursor, parseLimit } from '../../../shared/kernel/pagination/cursor';
import { SystemActor, auditActor } from '../../audit/application/audit-actor';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { Principal } from '../../auth/domain/principal';
import { OperationAcceptance } from '../../operations/application/operation-acceptance.port';
import { acceptHeld, copyChanges, renewalAudit } from '../../prepaid/application/copy.use-cases';
import { Operation, OperationStep, OperationType } from '../../operations/domain/operation';
import { checkAutoRenew } from '../../prepaid/domain/auto-renew';
import { Labels, checkLabels, parseLabelSelector } from '../../prepaid/domain/labels';
import { RENEWAL_TERMS, TermMonths, purchasedTerm } from '../../prepaid/domain/term';
import { ComputeHealth } from '../../servers/application/compute-provider.port';
import {
  ReservedIp, ReservedIpStatus, poolExhausted, quoteReservedIpRenewal, reservedIpAmount, reservedIpBusy, reservedIpSuspended,
} from '../domain/reserved-ip';
import { ReservedIpOpParams, reservedIpParams } from './reserved-ip-params';
import { ReservedIpRepository, TargetServer } from './reserved-ips.port';

export interface ReserveIpInput {
  region: string;
  termMonths: TermMonths;
  currency: Currency;
  serverId?: string;
  labels?: Record<string, unknown>;
}

const providerUnavailable = (): DomainError => new DomainError('provider_unavailable', 'The compute provider is unavailable; nothing was reserved. Retry later');

/** What an ip.* operation needs, its params written from the reservation. */
function ipOperation(orgId: string, type: OperationType, vmId: string | null, steps: OperationStep[], p: ReservedIpOpParams, now: Date): Operation {
  return Operation.create({ id: newId('op'), orgId, type, vmId, volumeId: null, steps, params: reservedIpParams.write(p), createdAt: now });
}

/**
 * The checks a server passes to take a reserved address (its row locked by the caller): the
 * organization's (404), live (404 when deleted), in the address's region (400 naming `field`),
 * running or stopped with an instance (409 invalid_state; suspended: details.reason), no
 * unfinished operation (409, details.operation_id), no reserved address already (409 conflict,
 * details.existing_id).
 */
async function checkTarget(rows: ReservedIpRepository, server: TargetServer | undefined, serverId: string, regionId: string, field: string, self?: string): Promise<TargetServer> {
  if (!server || server.status === 'deleted') throw notFound(`Server ${serverId} not found`);
  if (server.regionId !== regionId) throw invalidRequest(`${field} must be a server in region ${regionId} (server ${serverId} is in ${server.regionId})`, { field });
  if (server.status === 'suspended') {
    throw new DomainError('invalid_state', `Server ${serverId} is suspended (its term ended); renew it to assign it an address`, { reason: 'suspended' });
  }
  if (server.status !== 'running' && server.status !== 'stopped') throw invalidState(`Server ${serverId} is ${server.status}; an address can be assigned to a running or stopped server`);
  if (server.instanceMissingSince !== null) throw invalidState(`Server ${serverId} has no instance at the compute provider`);
  const busy = await rows.unfinishedServerOperation(serverId);
  if (busy) throw new DomainError('invalid_state', `Server ${serverId} has an unfinished operation ${busy}; wait for it to end`, { operation_id: busy });
  const holder = await rows.holdingServer(serverId);
  if (holder && holder !== self) {
    throw new DomainError('conflict', `Server ${serverId} has a reserved address already (${holder}); unassign it first`, { existing_id: holder });
  }
  return server;
}

/**
 * What the reservation, assignment, unassignment and release share: their collaborators, and the
 * acceptance of an action's operation on a reservation. (Injectable: its constructor's types are
 * the subclasses'.)
 */
@Injectable()
abstract class IpAction {
  constructor(
    protected readonly uow: UnitOfWork,
    protected readonly rows: ReservedIpRepository,
    protected readonly acceptance: OperationAcceptance,
    protected readonly health: ComputeHealth,
    protected readonly clock: Clock,
  ) {}

  /**
   * `operation` accepted on the reservation `r` with its audit row (`action`, `data`; actor
   * `principal`), then named on the reservation (with the server it moves the address to, when
   * one): 409 invalid_state `Reserved IP <id> could not be <done> now; retry` when it is not.
   */
  protected async accepted(
    principal: Principal | SystemActor,
    r: ReservedIp,
    operation: Operation,
    audit: { action: string; ip: string | null; data: Record<string, unknown>; done: string },
    pendingServerId?: string,
  ): Promise<{ reservedIp: ReservedIp; operation: Operation }> {
    const outcome = await this.acceptance.accept({
      operation,
      audit: { orgId: r.orgId, ...auditActor(principal), action: audit.action, targetId: r.id, ipAddress: audit.ip, data: audit.data },
    });
    if (outcome.kind !== 'accepted') throw invalidState(`Reserved IP ${r.id} could not be ${audit.done} now; retry`);
    if (pendingServerId === undefined) {
      await this.rows.setOperation(r.id, operation.id);
      return { reservedIp: { ...r, operationId: operation.id }, operation };
    }
    await this.rows.setOperation(r.id, operation.id, pendingServerId);
    return { reservedIp: { ...r, operationId: operation.id, pendingServerId }, operation };
  }
}

/**
 * POST /v1/reserved-ips: in one transaction, the target server's row locked when one is named,
 * the region's price (400 naming `region` when it sells none), an address of the region's pool
 * taken (409 out_of_stock when none is free: nothing is written), the reservation (`allocating`),
 * then the ip.reserve operation with the hold of `price × term_months` and the audit row
 * (`reserved_ip.reserve`; 402 when the wallet cannot cover it: nothing is left, the address back
 * in the pool). 503 while the compute provider is down.
 */
@Injectable()
export class ReserveIp extends IpAction {
  async execute(principal: Principal, input: ReserveIpInput, ip: string | null): Promise<{ reservedIp: ReservedIp; operation: Operation }> {
    const labels: Labels = input.labels === undefined ? {} : checkLabels(input.labels);
    return this.uow.run(async () => {
      const price = await this.rows.regionPrice(input.region);
      if (price === undefined) throw invalidRequest(`region must be a region of GET /v1/regions (${input.region} is not)`, { field: 'region' });
      if (price === null) throw invalidRequest(`Region ${input.region} sells no reserved addresses`, { field: 'region' });
      const serverId = input.serverId ?? null;
      if (serverId !== null) await checkTarget(this.rows, await this.rows.lockServer(principal.orgId, serverId), serverId, input.region, 'server_id');
      const now = this.clock.now();
      const id = newId('rip');
      const address = await this.rows.allocate(input.region, id, now);
      if (address === undefined) throw poolExhausted(input.region);
      const amount = reservedIpAmount(price, input.currency, input.termMonths);
      const steps: OperationStep[] = [{ name: 'payment_reserved', status: 'succeeded' }, { name: 'allocating', status: 'pending' }];
      if (serverId !== null) steps.push({ name: 'assigning', status: 'pending' });
      const operation = ipOperation(principal.orgId, 'ip.reserve', serverId, steps, {
        reservedIpId: id, ip: address, serverId, termMonths: input.termMonths, amount, suspend: null, reason: null,
      }, now);
      const reservedIp = await this.rows.create({
        id,
        orgId: principal.orgId,
        ip: address,
        regionId: input.region,
        status: 'allocating',
        pendingServerId: serverId,
        ...purchasedTerm(input.termMonths, amount, price, labels, operation.id, now),
      });
      await acceptHeld(this.acceptance, principal, operation, amount, {
        action: 'reserved_ip.reserve', targetId: id, ip,
        data: {
          operation_id: operation.id, ip: address, region: input.region, server_id: serverId, term_months: input.termMonths,
          currency: amount.currency, amount: amount.format(),
        },
      });
      if (this.health.isDown()) throw providerUnavailable();
      return { reservedIp, operation };
    });
  }
}

/** The reservation's row locked (404), with the checks every action on it shares: not released, not allocating, not busy. */
async function lockActionable(rows: ReservedIpRepository, orgId: string, id: string, action: string): Promise<ReservedIp> {
  const r = await rows.lockInOrg(orgId, id);
  if (!r) throw notFound(`Reserved IP ${id} not found`);
  if (r.status === 'released') throw invalidState(`Reserved IP ${id} is released`);
  if (r.status === 'allocating') throw invalidState(`Reserved IP ${id} is still being allocated; ${action} it once it is available`);
  if (r.operationId) throw reservedIpBusy(r);
  return r;
}

/**
 * POST /v1/reserved-ips/{id}/assign {server_id}: the server's row locked first (the order a
 * server's deletion takes), then the reservation's; the ip.assign operation (step `assigning`)
 * routes the address to the server, moving it from the server it was on. Audited
 * `reserved_ip.assign`. No charge.
 */
@Injectable()
export class AssignIp extends IpAction {
  async execute(principal: Principal, input: { id: string; serverId: string }, ip: string | null): Promise<{ reservedIp: ReservedIp; operation: Operation }> {
    return this.uow.run(async () => {
      const server = await this.rows.lockServer(principal.orgId, input.serverId);
      const r = await lockActionable(this.rows, principal.orgId, input.id, 'assign');
      if (r.status === 'suspended') throw reservedIpSuspended(r, 'assign it');
      if (r.serverId === input.serverId) throw invalidState(`Reserved IP ${r.id} is assigned to server ${input.serverId} already`);
      await checkTarget(this.rows, server, input.serverId, r.regionId, 'server_id', r.id);
      const operation = ipOperation(principal.orgId, 'ip.assign', input.serverId, [{ name: 'assigning', status: 'pending' }], {
        reservedIpId: r.id, ip: r.ip, serverId: input.serverId, termMonths: null, amount: null, suspend: null, reason: null,
      }, this.clock.now());
      const accepted = await this.accepted(principal, r, operation, {
        action: 'reserved_ip.assign', ip, done: 'assigned',
        data: { operation_id: operation.id, ip: r.ip, server_id: input.serverId, previous_server_id: r.serverId },
      }, input.serverId);
      if (this.health.isDown()) throw providerUnavailable();
      return accepted;
    });
  }
}

/**
 * Locks the reservation's server (when it has one) before the reservation, the order a server's
 * deletion takes, and re-reads the reservation under both locks.
 */
async function lockWithServer(rows: ReservedIpRepository, orgId: string, id: string, action: string): Promise<ReservedIp> {
  const seen = await rows.findInOrg(orgId, id);
  if (seen?.serverId) await rows.lockServer(orgId, seen.serverId);
  const r = await lockActionable(rows, orgId, id, action);
  if (r.serverId !== (seen?.serverId ?? null)) throw invalidState(`Reserved IP ${id} changed meanwhile; retry`);
  return r;
}

/**
 * POST /v1/reserved-ips/{id}/unassign: the ip.unassign operation (step `unassigning`) routes the
 * address to nothing; it stays reserved (`available`). 409 invalid_state when it is not assigned.
 * Audited `reserved_ip.unassign`.
 */
@Injectable()
export class UnassignIp extends IpAction {
  async execute(principal: Principal, input: { id: string }, ip: string | null): Promise<{ reservedIp: ReservedIp; operation: Operation }> {
    return this.uow.run(async () => {
      const r = await lockWithServer(this.rows, principal.orgId, input.id, 'unassign');
      if (r.status !== 'assigned' || r.serverId === null) throw invalidState(`Reserved IP ${r.id} is not assigned to a server`);
      const operation = ipOperation(principal.orgId, 'ip.unassign', r.serverId, [{ name: 'unassigning', status: 'pending' }], {
        reservedIpId: r.id, ip: r.ip, serverId: r.serverId, termMonths: null, amount: null, suspend: null, reason: null,
      }, this.clock.now());
      const accepted = await this.accepted(principal, r, operation, {
        action: 'reserved_ip.unassign', ip, done: 'unassigned', data: { operation_id: operation.id, ip: r.ip, server_id: r.serverId },
      });
      if (this.health.isDown()) throw providerUnavailable();
      return accepted;
    });
  }

  /**
   * The term sweep's suspension of an assigned reservation (its row locked by the caller): an
   * ip.unassign by `system` that leaves it `suspended` (suspended_at, release_at) when it succeeds.
   * False when its server is busy (the next sweep tries again).
   */
  async suspendLocked(system: SystemActor, r: ReservedIp, at: Date, releaseAt: Date): Promise<boolean> {
    if (r.serverId === null) return false;
    if (await this.rows.unfinishedServerOperation(r.serverId)) return false;
    const operation = ipOperation(r.orgId, 'ip.unassign', r.serverId, [{ name: 'unassigning', status: 'pending' }], {
      reservedIpId: r.id, ip: r.ip, serverId: r.serverId, termMonths: null, amount: null, suspend: { at, releaseAt }, reason: null,
    }, this.clock.now());
    const outcome = await this.acceptance.accept({
      operation,
      audit: {
        orgId: r.orgId, ...auditActor(system), action: 'reserved_ip.suspend', targetId: r.id, ipAddress: null,
        data: { operation_id: operation.id, ip: r.ip, server_id: r.serverId, suspended_at: at.toISOString(), release_at: releaseAt.toISOString() },
      },
    });
    if (outcome.kind !== 'accepted') return false;
    await this.rows.setOperation(r.id, operation.id);
    return true;
  }
}

/**
 * POST /v1/reserved-ips/{id}/renew: the ip.renew operation (step `renewing`) with the hold at the
 * frozen price (`price × term_months`, the billing currency by default; 402), audited
 * `reserved_ip.renew`. A suspended reservation may be renewed (available again on success).
 */
@Injectable()
export class RenewIp {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly rows: ReservedIpRepository,
    private readonly acceptance: OperationAcceptance,
    private readonly clock: Clock,
  ) {}

  execute(principal: Principal | SystemActor, input: { id: string; termMonths: TermMonths; currency?: Currency; auto?: boolean }, ip: string | null): Promise<{ reservedIp: ReservedIp; operation: Operation }> {
    return this.uow.run(async () => {
      const r = await this.rows.lockInOrg(principal.orgId, input.id);
      if (!r) throw notFound(`Reserved IP ${input.id} not found`);
      const quote = quoteReservedIpRenewal(r, input.termMonths, input.currency);
      const operation = ipOperation(principal.orgId, 'ip.renew', null, [{ name: 'renewing', status: 'running' }], {
        reservedIpId: r.id, ip: r.ip, serverId: null, termMonths: quote.termMonths, amount: quote.amount, suspend: null, reason: null,
      }, this.clock.now());
      await acceptHeld(this.acceptance, principal, operation, quote.amount, {
        action: 'reserved_ip.renew', targetId: r.id, ip, data: renewalAudit(operation, quote, input.auto),
      });
      await this.rows.setOperation(r.id, operation.id);
      return { reservedIp: { ...r, operationId: operation.id }, operation };
    });
  }
}

/**
 * DELETE /v1/reserved-ips/{id}: the ip.release operation (`unassigning` when assigned, then
 * `releasing`) gives the address back to its region's pool, handed out again after
 * IP_COOLDOWN_S. The prepaid term is not refunded. Audited `reserved_ip.release`.
 */
@Injectable()
export class ReleaseIp extends IpAction {
  execute(principal: Principal, input: { id: string }, ip: string | null): Promise<{ reservedIp: ReservedIp; operation: Operation }> {
    return this.uow.run(async () => {
      const r = await lockWithServer(this.rows, principal.orgId, input.id, 'release');
      const accepted = await this.releaseLocked(principal, r, 'customer', ip);
      if (this.health.isDown()) throw providerUnavailable();
      return accepted;
    });
  }

  /** The reservation's row (and its server's, when assigned) locked by the caller. */
  async releaseLocked(principal: Principal | SystemActor, r: ReservedIp, reason: 'customer' | 'expired', ip: string | null): Promise<{ reservedIp: ReservedIp; operation: Operation }> {
    const steps: OperationStep[] = r.serverId ? [{ name: 'unassigning', status: 'pending' }, { name: 'releasing', status: 'pending' }] : [{ name: 'releasing', status: 'pending' }];
    const operation = ipOperation(r.orgId, 'ip.release', r.serverId, steps, {
      reservedIpId: r.id, ip: r.ip, serverId: r.serverId, termMonths: null, amount: null, suspend: null, reason,
    }, this.clock.now());
    return this.accepted(principal, r, operation, {
      action: 'reserved_ip.release', ip, done: 'released',
      data: { operation_id: operation.id, ip: r.ip, server_id: r.serverId, ...(reason === 'expired' ? { reason } : {}) },
    });
  }
}

/** PATCH /v1/reserved-ips/{id} {labels?, auto_renew?}: synchronous; audited `reserved_ip.update` with what changed. */
@Injectable()
export class UpdateIp {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly rows: ReservedIpRepository,
    private readonly audit: AuditTrail,
  ) {}

  async execute(principal: Principal, input: { id: string; labels?: Record<string, unknown>; autoRenew?: unknown }, ip: string | null): Promise<ReservedIp> {
    const labels = input.labels === undefined ? undefined : checkLabels(input.labels);
    const autoRenew = input.autoRenew === undefined ? undefined : checkAutoRenew(input.autoRenew, RENEWAL_TERMS);
    return this.uow.run(async () => {
      const r = await this.rows.lockInOrg(principal.orgId, input.id);
      if (!r) throw notFound(`Reserved IP ${input.id} not found`);
      if (r.status === 'released') throw invalidState(`Reserved IP ${r.id} is released`);
      const { changes, changed } = copyChanges(r, { labels, autoRenew });
      if (Object.keys(changed).length === 0) return r;
      await this.rows.update(r.id, changes);
      await this.audit.record({ orgId: principal.orgId, ...auditActor(principal), action: 'reserved_ip.update', targetId: r.id, ipAddress: ip, data: { changes: changed } });
      return (await this.rows.findInOrg(principal.orgId, r.id))!;
    });
  }
}

/** GET /v1/reserved-ips and GET /v1/reserved-ips/{id}: the organization's reservations (released ones by id, or with status=released). */
@Injectable()
export class ReservedIpQueries {
  constructor(private readonly rows: ReservedIpRepository) {}

  async get(principal: Principal, id: string): Promise<ReservedIp> {
    const r = await this.rows.findInOrg(principal.orgId, id);
    if (!r) throw notFound(`Reserved IP ${id} not found`);
    return r;
  }

  async list(
    principal: Principal,
    input: { limit?: string; cursor?: string; region?: string; status?: ReservedIpStatus; label?: string | string[] },
  ): Promise<{ reservedIps: ReservedIp[]; nextCursor: string | null }> {
    const limit = parseLimit(input.limit);
    const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor);
    const selectors = input.label === undefined ? [] : Array.isArray(input.label) ? input.label : [input.label];
    const page = await this.rows.listInOrg(principal.orgId, {
      limit, after, filter: { regionId: input.region, status: input.status, labels: selectors.map((s) => parseLabelSelector(s)) },
    });
    return { reservedIps: page.items, nextCursor: page.next && encodeCursor(page.next) };
  }
}

