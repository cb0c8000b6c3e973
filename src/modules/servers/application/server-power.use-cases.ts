import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { invalidState, notFound } from '../../../shared/kernel/errors/domain-error';
import { newId } from '../../../shared/kernel/ids/ids';
import { Currency, Money } from '../../../shared/kernel/money/money';
import { AuditEntry, AuditTrail } from '../../audit/application/audit-trail.port';
import { Principal } from '../../auth/domain/principal';
import { JsonObject, Operation, OperationStep, OperationType } from '../../operations/domain/operation';
import { SystemActor, auditActor } from '../../audit/application/audit-actor';
import { TermMonths, termAmount } from '../../prepaid/domain/term';
import { WalletLedger } from '../../wallet/application/wallet.port';
import { insufficientBalance } from '../../wallet/domain/wallet-errors';
import { Server, ServerStatus, instanceMissing, instanceMissingError } from '../domain/server';
import { POWER_ACTIONS, PowerAction, assertStatus, computeUnavailable, powerSteps, serverBusy } from '../domain/server-actions';
import { ComputeHealth } from './compute-provider.port';
import { OperationToAccept } from '../../operations/application/operation-acceptance.port';
import { renewalParams } from '../../prepaid/application/renewal-params';
import { powerParams } from './server-operation-params';
import { ServerLifecycle } from './server-lifecycle.port';
import { ServerReads, ServerWrites } from './servers.port';

/** What an action's checks decide: the operation's steps and params, the audit entry's data, the price to hold. */
export interface ActionPlan {
  steps: OperationStep[];
  params: JsonObject;
  audit: JsonObject;
  hold?: Money;
}

export interface ServerActionResult {
  server: Server;
  operation: Operation;
}

/**
 * What the server actions share (servers.md "Power, renewal"), in one transaction: lock the
 * server (404), refuse an unfinished vm.* or template.* operation (409 invalid_state naming it in
 * details.operation_id, before the status rule), the status rule (409 invalid_state), the
 * action's own checks; the operation stored (the unique partial index is the last word: its
 * violation is the same 409), the hold (402), the server's status at acceptance, the audit row;
 * the compute provider's health last for actions that call it (503, the transaction rolled back:
 * nothing recorded).
 */
@Injectable()
export class ServerActionRunner {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly reads: ServerReads,
    private readonly writes: ServerWrites,
    private readonly lifecycle: ServerLifecycle,
    private readonly wallet: WalletLedger,
    private readonly audit: AuditTrail,
    private readonly health: ComputeHealth,
    private readonly clock: Clock,
  ) {}

  run(
    principal: Principal | SystemActor,
    serverId: string,
    ip: string | null,
    action: {
      type: OperationType;
      from: readonly ServerStatus[];
      /** The status at acceptance; undefined: unchanged. */
      during?: ServerStatus;
      /** Further 409 checks and the operation's shape. */
      plan: (server: Server) => ActionPlan | Promise<ActionPlan>;
      /** Reserves what the action adds (a plan change's vCPUs: 409 out_of_stock), once the operation is stored, before the hold. */
      reserve?: (server: Server) => Promise<void>;
      /** Whether the action calls the compute provider (503 while its circuit is open). */
      callsProvider: boolean;
    },
  ): Promise<ServerActionResult> {
    return this.uow.run(async () => {
      const server = await this.writes.lockInOrg(principal.orgId, serverId);
      if (!server) throw notFound(`Server ${serverId} not found`);
      if (!server.deletedAt) {
        const busy = await this.lifecycle.unfinishedOperation(server.id);
        if (busy) throw serverBusy(server.id, busy);
      }
      const { plan, operation, audit } = await this.prepare(principal, server, ip, action);
      await this.acceptOperation(server.id, operation);
      await action.reserve?.(server);
      if (plan.hold && plan.hold.minor > 0n) {
        const hold = await this.wallet.hold(principal.orgId, plan.hold, operation.id);
        if (!hold.held) throw insufficientBalance(plan.hold, hold.available);
      }
      if (action.during && action.during !== server.status) await this.lifecycle.setStatus(server.id, action.during);
      await this.audit.record(audit);
      if (action.callsProvider && this.health.isDown()) throw computeUnavailable();
      const after = action.during && action.during !== server.status ? (await this.reads.findInOrg(principal.orgId, server.id))! : server;
      return { server: after, operation };
    });
  }

  /**
   * The action's decisions on `server` (locked by the caller), without I/O but the plan's own:
   * the status rule, a known missing instance, the action's checks, the operation and its audit
   * entry.
   */
  async prepare(
    principal: Principal | SystemActor,
    server: Server,
    ip: string | null,
    action: { type: OperationType; from: readonly ServerStatus[]; plan: (server: Server) => ActionPlan | Promise<ActionPlan> },
  ): Promise<{ plan: ActionPlan; operation: Operation; audit: AuditEntry }> {
    assertStatus(server, action.type, action.from);
    // Its instance is known missing at the provider (the reconciliation sweep flagged it): nothing to power or renew.
    if (instanceMissing(server)) throw instanceMissingError(server);
    const plan = await action.plan(server);
    const operation = Operation.create({
      id: newId('op'),
      orgId: principal.orgId,
      type: action.type,
      vmId: server.id,
      steps: plan.steps,
      params: plan.params,
      createdAt: this.clock.now(),
    });
    const audit: AuditEntry = {
      orgId: principal.orgId,
      ...auditActor(principal),
      action: action.type.replace(/^vm\./, 'server.'),
      targetId: server.id,
      ipAddress: ip,
      data: { operation_id: operation.id, ...plan.audit },
    };
    return { plan, operation, audit };
  }

  /** Stores the operation; the unique index's refusal (another request's operation) is 409 naming that operation. */
  private async acceptOperation(serverId: string, operation: Operation): Promise<void> {
    const outcome = await this.lifecycle.acceptOperation(operation);
    if (outcome.accepted) return;
    throw outcome.busyWith ? serverBusy(serverId, outcome.busyWith) : invalidState(`Server ${serverId} has an operation pending or running; wait for it to end`);
  }
}

/** POST /v1/servers/{id}/start, /stop {force?}, /reboot {hard?}: vm.start, vm.stop, vm.reboot. */
@Injectable()
export class PowerServer {
  constructor(private readonly runner: ServerActionRunner) {}

  execute(principal: Principal, input: { serverId: string; type: PowerAction; flag: boolean }, ip: string | null): Promise<ServerActionResult> {
    const rule = POWER_ACTIONS[input.type];
    const flagName = input.type === 'vm.stop' ? 'force' : input.type === 'vm.reboot' ? 'hard' : undefined;
    return this.runner.run(principal, input.serverId, ip, {
      type: input.type,
      from: [rule.from],
      during: rule.during,
      callsProvider: true,
      plan: () => ({
        steps: powerSteps(input.type, input.flag),
        params: powerParams.write({ flag: input.flag }),
        audit: flagName ? { [flagName]: input.flag } : {},
      }),
    });
  }
}

/**
 * POST /v1/servers/{id}/renew {term_months, currency?}: vm.renew at the frozen
 * `price_per_month[currency] × term_months` (currency defaults to billing.currency), held now;
 * running or stopped servers only; a seeded server (no price) is 409 invalid_state. No provider
 * call, so never 503.
 */
@Injectable()
export class RenewServer {
  constructor(private readonly runner: ServerActionRunner) {}

  /** `auto`: an automatic renewal by actor system (terms.md), audited with `data.auto: true`. */
  execute(
    principal: Principal | SystemActor,
    input: { serverId: string; termMonths: TermMonths; currency?: Currency; auto?: boolean },
    ip: string | null,
  ): Promise<ServerActionResult> {
    return this.runner.run(principal, input.serverId, ip, { ...this.action(input), callsProvider: false });
  }

  /**
   * The renewal of `server` (its row locked by the caller) as an operation to accept, the checks
   * and price of execute(): the term sweep accepts many at once (OperationAcceptance.acceptMany).
   */
  async toAccept(
    principal: Principal | SystemActor,
    server: Server,
    input: { termMonths: TermMonths; currency?: Currency; auto?: boolean },
  ): Promise<OperationToAccept & { hold: Money }> {
    const { plan, operation, audit } = await this.runner.prepare(principal, server, null, this.action(input));
    return { operation, audit, hold: plan.hold! };
  }

  private action(input: { termMonths: TermMonths; currency?: Currency; auto?: boolean }) {
    return {
      type: 'vm.renew' as const,
      from: ['running', 'stopped', 'suspended'] as ServerStatus[],
      plan: (server: Server): ActionPlan => {
        if (!server.price || !server.billing) throw invalidState(`Server ${server.id} was not bought here (a seeded server) and cannot be renewed`);
        const currency = input.currency ?? server.billing.currency;
        const amount = termAmount(server.price, currency, input.termMonths);
        // terms.md: a suspended server's renewal resumes it (powered on again when it ran before).
        const resume = server.status === 'suspended';
        return {
          steps: [{ name: 'renewing', status: 'running' }, ...(resume ? [{ name: 'resuming', status: 'pending' as const }] : [])],
          params: {
            ...renewalParams.write({ termMonths: input.termMonths, amount }),
            ...(resume ? { resume: { power_on: server.powerBefore === 'running' } } : {}),
          },
          audit: { term_months: input.termMonths, currency, amount: amount.format(), ...(input.auto ? { auto: true } : {}) },
          hold: amount,
        };
      },
    };
  }
}
