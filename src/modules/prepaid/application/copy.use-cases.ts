import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { DomainError, invalidState, notFound } from '../../../shared/kernel/errors/domain-error';
import { newId } from '../../../shared/kernel/ids/ids';
import { Currency, Money } from '../../../shared/kernel/money/money';
import { SystemActor, auditActor } from '../../audit/application/audit-actor';
import { AuditEntry, AuditTrail } from '../../audit/application/audit-trail.port';
import { Principal } from '../../auth/domain/principal';
import { OperationAcceptance } from '../../operations/application/operation-acceptance.port';
import { JsonObject, Operation, OperationType } from '../../operations/domain/operation';
import { insufficientBalance } from '../../wallet/domain/wallet-errors';
import { AutoRenewInput, checkAutoRenew } from '../domain/auto-renew';
import { Labels, checkLabels, sameLabels } from '../domain/labels';
import { DeletedReason, RENEWAL_TERMS, RenewalQuote, TermMonths } from '../domain/term';

/** What the renew, delete and update use cases read of a prepaid copy (a disk's snapshot, a server's image). */
export interface PrepaidCopy {
  id: string;
  orgId: string;
  name: string;
  status: string;
  labels: Labels;
  autoRenew: { enabled: boolean; termMonths: TermMonths | null };
  operationId: string | null;
  deletedReason: DeletedReason | null;
}

/** What a copy's name, labels and automatic renewal may change to. */
export interface CopyChanges {
  name?: string;
  labels?: Labels;
  autoRenew?: { enabled: boolean; termMonths: TermMonths | null };
}

/** The kinds of copy whose operation types include `<kind>.renew` and `<kind>.delete`. */
type Renewable<T> = T extends `${infer K}.renew` ? (`${K}.delete` extends OperationType ? K : never) : never;
export type CopyKindName = Renewable<OperationType>;

/** How the renew, delete and update use cases reach one kind of prepaid copy: its rows, its names and its rules. */
export interface CopyUseCaseKind<C extends PrepaidCopy> {
  /** The noun of its messages: `Snapshot ${id} not found`. */
  noun: string;
  /** The prefix of its operation types and audit actions: `<kind>.renew`, `<kind>.delete`, `<kind>.update`. */
  kind: CopyKindName;
  rows: {
    findInOrg(orgId: string, id: string): Promise<C | undefined>;
    lockInOrg(orgId: string, id: string): Promise<C | undefined>;
    update(id: string, changes: CopyChanges): Promise<void>;
    setOperation(id: string, operationId: string | null): Promise<void>;
    markDeleting(id: string, operationId: string, reason: DeletedReason): Promise<void>;
  };
  /** Its operations' params. */
  params(copy: C, termMonths: TermMonths | null, amount: Money | null): JsonObject;
  quoteRenewal(copy: C, termMonths: TermMonths, currency?: Currency): RenewalQuote;
  checkName(value: unknown): string;
  /** 409 for a copy with an operation in flight. */
  busy(copy: C): DomainError;
  /** 503 while its provider is down. */
  providerUnavailable(): DomainError;
}

/**
 * `operation` accepted with the hold of `amount` and its audit row (`action` on `targetId` by
 * `principal`, in its organization, from `ip`): 402 insufficient_balance when the wallet cannot
 * cover the hold, 409 invalid_state when another operation is in the way; nothing is written then.
 */
export async function acceptHeld(
  acceptance: OperationAcceptance,
  principal: Principal | SystemActor,
  operation: Operation,
  amount: Money,
  audit: { action: string; targetId: string; ip: string | null; data: AuditEntry['data'] },
): Promise<void> {
  const outcome = await acceptance.accept({
    operation,
    hold: amount,
    audit: { orgId: principal.orgId, ...auditActor(principal), action: audit.action, targetId: audit.targetId, ipAddress: audit.ip, data: audit.data },
  });
  if (outcome.kind === 'insufficient') throw insufficientBalance(amount, outcome.available);
  if (outcome.kind === 'busy') throw invalidState(`Operation ${outcome.operationId} is in the way`);
}

/** The audit data of a renewal (`<kind>.renew`): its operation, term and charge; `auto: true` when automatic. */
export function renewalAudit(operation: Operation, quote: RenewalQuote, auto?: boolean): AuditEntry['data'] {
  return {
    operation_id: operation.id, term_months: quote.termMonths, currency: quote.amount.currency, amount: quote.amount.format(),
    ...(auto ? { auto: true } : {}),
  };
}

/**
 * The renewal of a prepaid copy: its row locked (404), the `<kind>.renew` operation with the hold
 * at the frozen price (402), audited `<kind>.renew` (with `data.auto: true` when automatic).
 */
export class RenewCopy<C extends PrepaidCopy> {
  constructor(
    private readonly of: CopyUseCaseKind<C>,
    private readonly uow: UnitOfWork,
    private readonly acceptance: OperationAcceptance,
    private readonly clock: Clock,
  ) {}

  execute(
    principal: Principal | SystemActor,
    input: { id: string; termMonths: TermMonths; currency?: Currency; auto?: boolean },
    ip: string | null,
  ): Promise<{ copy: C; operation: Operation }> {
    return this.uow.run(async () => {
      const copy = await this.of.rows.lockInOrg(principal.orgId, input.id);
      if (!copy) throw notFound(`${this.of.noun} ${input.id} not found`);
      const quote = this.of.quoteRenewal(copy, input.termMonths, input.currency);
      const operation = Operation.create({
        id: newId('op'),
        orgId: principal.orgId,
        type: `${this.of.kind}.renew`,
        vmId: null,
        volumeId: null,
        steps: [{ name: 'renewing', status: 'running' }],
        params: this.of.params(copy, quote.termMonths, quote.amount),
        createdAt: this.clock.now(),
      });
      await acceptHeld(this.acceptance, principal, operation, quote.amount, {
        action: `${this.of.kind}.renew`, targetId: copy.id, ip, data: renewalAudit(operation, quote, input.auto),
      });
      await this.of.rows.setOperation(copy.id, operation.id);
      return { copy: { ...copy, operationId: operation.id }, operation };
    });
  }
}

/**
 * The deletion of a prepaid copy: it becomes `deleting` at once and a `<kind>.delete` operation
 * (step `deleting`) deletes it at the provider. 409 invalid_state while it is being created,
 * already deleted, or busy (a renewal). The prepaid term is not refunded.
 */
export class DeleteCopy<C extends PrepaidCopy> {
  constructor(
    private readonly of: CopyUseCaseKind<C>,
    private readonly uow: UnitOfWork,
    private readonly acceptance: OperationAcceptance,
    private readonly health: { isDown(): boolean },
    private readonly clock: Clock,
  ) {}

  execute(principal: Principal | SystemActor, input: { id: string; reason?: 'customer' | 'expired' }, ip: string | null): Promise<{ copy: C; operation: Operation }> {
    return this.uow.run(async () => {
      const copy = await this.of.rows.lockInOrg(principal.orgId, input.id);
      if (!copy) throw notFound(`${this.of.noun} ${input.id} not found`);
      return this.deleteLocked(principal, copy, input.reason ?? 'customer', ip);
    });
  }

  /** The copy's row locked by the caller. */
  async deleteLocked(principal: Principal | SystemActor, copy: C, reason: 'customer' | 'expired', ip: string | null): Promise<{ copy: C; operation: Operation }> {
    const { noun } = this.of;
    if (copy.status === 'deleted') throw invalidState(`${noun} ${copy.id} is deleted already`);
    if (copy.status === 'creating') throw invalidState(`${noun} ${copy.id} is still being created; delete it once it is available`);
    if (copy.operationId) throw this.of.busy(copy);
    // `deleting` with no operation: an earlier deletion failed at the provider; this one tries again.
    const operation = Operation.create({
      id: newId('op'),
      orgId: copy.orgId,
      type: `${this.of.kind}.delete`,
      vmId: null,
      volumeId: null,
      steps: [{ name: 'deleting', status: 'pending' }],
      params: this.of.params(copy, null, null),
      createdAt: this.clock.now(),
    });
    const outcome = await this.acceptance.accept({
      operation,
      audit: {
        orgId: copy.orgId,
        ...auditActor(principal),
        action: `${this.of.kind}.delete`,
        targetId: copy.id,
        ipAddress: ip,
        data: { operation_id: operation.id, ...(reason === 'expired' ? { reason } : {}) },
      },
    });
    if (outcome.kind !== 'accepted') throw invalidState(`${noun} ${copy.id} could not be deleted now; retry`);
    await this.of.rows.markDeleting(copy.id, operation.id, reason);
    if (principal.kind !== 'system' && this.health.isDown()) throw this.of.providerUnavailable();
    return { copy: { ...copy, status: 'deleting', operationId: operation.id, deletedReason: reason }, operation };
  }
}

/**
 * What an update of a prepaid copy `c` (its name, labels, automatic renewal: each undefined when
 * not asked) changes: the changes to store and, for the audit, `{old, new}` of each member that
 * differs (name, labels, auto_renew; none: nothing changes). A left-out `term_months` of
 * auto_renew keeps the current one.
 */
export function copyChanges(
  c: { name?: string; labels: Labels; autoRenew: { enabled: boolean; termMonths: TermMonths | null } },
  input: { name?: string; labels?: Labels; autoRenew?: AutoRenewInput },
): { changes: CopyChanges; changed: Record<string, { old: unknown; new: unknown }> } {
  const { name, labels, autoRenew } = input;
  const changes: CopyChanges = {};
  const changed: Record<string, { old: unknown; new: unknown }> = {};
  if (name !== undefined && name !== c.name) {
    changes.name = name;
    changed.name = { old: c.name, new: name };
  }
  if (labels !== undefined && !sameLabels(labels, c.labels)) {
    changes.labels = labels;
    changed.labels = { old: c.labels, new: labels };
  }
  if (autoRenew !== undefined) {
    const next = { enabled: autoRenew.enabled, termMonths: autoRenew.termMonths === undefined ? c.autoRenew.termMonths : autoRenew.termMonths };
    if (next.enabled !== c.autoRenew.enabled || next.termMonths !== c.autoRenew.termMonths) {
      changes.autoRenew = next;
      changed.auto_renew = { old: { enabled: c.autoRenew.enabled, term_months: c.autoRenew.termMonths }, new: { enabled: next.enabled, term_months: next.termMonths } };
    }
  }
  return { changes, changed };
}

/** The update of a prepaid copy's name, labels or automatic renewal: synchronous; audited `<kind>.update` with what changed. */
export class UpdateCopy<C extends PrepaidCopy> {
  constructor(
    private readonly of: CopyUseCaseKind<C>,
    private readonly uow: UnitOfWork,
    private readonly audit: AuditTrail,
  ) {}

  async execute(principal: Principal, input: { id: string; name?: string; labels?: Record<string, unknown>; autoRenew?: unknown }, ip: string | null): Promise<C> {
    const name = input.name === undefined ? undefined : this.of.checkName(input.name);
    const labels = input.labels === undefined ? undefined : checkLabels(input.labels);
    const autoRenew = input.autoRenew === undefined ? undefined : checkAutoRenew(input.autoRenew, RENEWAL_TERMS);
    return this.uow.run(async () => {
      const c = await this.of.rows.lockInOrg(principal.orgId, input.id);
      if (!c) throw notFound(`${this.of.noun} ${input.id} not found`);
      if (c.status === 'deleted') throw invalidState(`${this.of.noun} ${c.id} is deleted`);
      const { changes, changed } = copyChanges(c, { name, labels, autoRenew });
      if (Object.keys(changed).length === 0) return c;
      await this.of.rows.update(c.id, changes);
      await this.audit.record({ orgId: principal.orgId, ...auditActor(principal), action: `${this.of.kind}.update`, targetId: c.id, ipAddress: ip, data: { changes: changed } });
      return (await this.of.rows.findInOrg(principal.orgId, c.id))!;
    });
  }
}
