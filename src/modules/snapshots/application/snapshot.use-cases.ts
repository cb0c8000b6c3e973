import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { DomainError, invalidState, notFound } from '../../../shared/kernel/errors/domain-error';
import { newId } from '../../../shared/kernel/ids/ids';
import { Currency } from '../../../shared/kernel/money/money';
import { decodeCursor, encodeCursor, parseLimit } from '../../../shared/kernel/pagination/cursor';
import { SystemActor } from '../../audit/application/audit-actor';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { Principal } from '../../auth/domain/principal';
import { OperationAcceptance } from '../../operations/application/operation-acceptance.port';
import { CopyUseCaseKind, DeleteCopy, RenewCopy, UpdateCopy, acceptHeld } from '../../prepaid/application/copy.use-cases';
import { Operation } from '../../operations/domain/operation';
import { TermMonths, purchasedTerm } from '../../prepaid/domain/term';
import { Labels, checkLabels, parseLabelSelector } from '../../prepaid/domain/labels';
import { suspendedError } from '../../prepaid/domain/suspension';
import { ProviderHealth } from '../../storage-provider/application/block-storage.port';
import { VolumeRepository } from '../../volumes/application/volumes.port';
import { Snapshot, SnapshotStatus, checkSnapshotName, quoteSnapshotRenewal, snapshotAmount, snapshotBusy } from '../domain/snapshot';
import { snapshotParams } from './snapshot-params';
import { SnapshotRepository } from './snapshots.port';

export interface CreateSnapshotInput {
  volumeId: string;
  name: string;
  termMonths: TermMonths;
  currency: Currency;
  labels?: Record<string, unknown>;
}

const providerUnavailable = (): DomainError => new DomainError('provider_unavailable', 'The storage provider is unavailable; nothing was reserved. Retry later');

/**
 * POST /v1/volumes/{id}/snapshots: in one transaction, the disk's row locked (404; 409
 * invalid_state unless available or attached: suspended ones with details.reason), the region's
 * snapshot price (404 when it sells none), the snapshot row (`creating`; the live counts of the
 * disk and the organization go up with it in the database: 409 quota_exceeded past 10 or 100),
 * then the snapshot.create operation with the hold of `size_gb × price × term_months` and the
 * audit row (402 when the wallet cannot cover it: nothing is left). 503 while the provider is down.
 */
@Injectable()
export class CreateSnapshot {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly volumes: VolumeRepository,
    private readonly snapshots: SnapshotRepository,
    private readonly acceptance: OperationAcceptance,
    private readonly health: ProviderHealth,
    private readonly clock: Clock,
  ) {}

  async execute(principal: Principal, input: CreateSnapshotInput, ip: string | null): Promise<{ snapshot: Snapshot; operation: Operation }> {
    const name = checkSnapshotName(input.name);
    const labels: Labels = input.labels === undefined ? {} : checkLabels(input.labels);
    return this.uow.run(async () => {
      const volume = await this.volumes.lockInOrg(principal.orgId, input.volumeId);
      if (!volume || volume.status === 'deleted') throw notFound(`Volume ${input.volumeId} not found`);
      const price = await this.snapshots.regionPrice(volume.regionId);
      if (!price) throw notFound(`Region ${volume.regionId} sells no snapshots`);
      if (volume.status === 'suspended') throw suspendedError('Volume', volume.id, 'snapshot it');
      if (volume.status !== 'available' && volume.status !== 'attached') {
        throw invalidState(`Volume ${volume.id} is ${volume.status}; a snapshot needs an available or attached disk`);
      }
      const now = this.clock.now();
      const amount = snapshotAmount(price, input.currency, input.termMonths, volume.sizeGb);
      const snapshotId = newId('snap');
      const operation = Operation.create({
        id: newId('op'),
        orgId: principal.orgId,
        type: 'snapshot.create',
        vmId: null,
        volumeId: null,
        steps: [{ name: 'payment_reserved', status: 'succeeded' }, { name: 'snapshotting', status: 'pending' }],
        params: snapshotParams.write({ snapshotId, volumeId: volume.id, termMonths: input.termMonths, amount }),
        createdAt: now,
      });
      // The counts' CHECKs decide here (409 quota_exceeded), before the money.
      const snapshot = await this.snapshots.create({
        id: snapshotId,
        orgId: principal.orgId,
        name,
        status: 'creating',
        volumeId: volume.id,
        regionId: volume.regionId,
        zoneId: volume.zoneId,
        type: volume.type,
        sizeGb: volume.sizeGb,
        ...purchasedTerm(input.termMonths, amount, price, labels, operation.id, now),
      });
      await acceptHeld(this.acceptance, principal, operation, amount, {
        action: 'snapshot.create', targetId: snapshotId, ip,
        data: {
          operation_id: operation.id, name, volume_id: volume.id, size_gb: volume.sizeGb, term_months: input.termMonths,
          currency: amount.currency, amount: amount.format(),
        },
      });
      if (this.health.isDown()) throw providerUnavailable();
      return { snapshot, operation };
    });
  }
}

/** How the renew, delete and update use cases reach snapshots. */
export function snapshotCopies(snapshots: SnapshotRepository): CopyUseCaseKind<Snapshot> {
  return {
    noun: 'Snapshot',
    kind: 'snapshot',
    rows: snapshots,
    params: (s, termMonths, amount) => snapshotParams.write({ snapshotId: s.id, volumeId: s.volumeId, termMonths, amount }),
    quoteRenewal: quoteSnapshotRenewal,
    checkName: (value) => checkSnapshotName(value),
    busy: snapshotBusy,
    providerUnavailable,
  };
}

/**
 * POST /v1/snapshots/{id}/renew: the snapshot's row locked (404; 409 invalid_state when creating,
 * deleting, deleted or busy), the snapshot.renew operation with the hold at the frozen price
 * (`size_gb × price × term_months`, currency the billing one by default; 402), audited
 * `snapshot.renew`. A suspended snapshot may be renewed (available again on success).
 */
@Injectable()
export class RenewSnapshot {
  private readonly renewal: RenewCopy<Snapshot>;

  constructor(uow: UnitOfWork, snapshots: SnapshotRepository, acceptance: OperationAcceptance, clock: Clock) {
    this.renewal = new RenewCopy(snapshotCopies(snapshots), uow, acceptance, clock);
  }

  async execute(
    principal: Principal | SystemActor,
    input: { snapshotId: string; termMonths: TermMonths; currency?: Currency; auto?: boolean },
    ip: string | null,
  ): Promise<{ snapshot: Snapshot; operation: Operation }> {
    const { copy, operation } = await this.renewal.execute(principal, { id: input.snapshotId, termMonths: input.termMonths, currency: input.currency, auto: input.auto }, ip);
    return { snapshot: copy, operation };
  }
}

/**
 * DELETE /v1/snapshots/{id}: the snapshot becomes `deleting` at once and a snapshot.delete
 * operation (step `deleting`) deletes it at the provider. 409 invalid_state while it is being
 * created, already deleting or deleted, or busy (a renewal). The prepaid term is not refunded.
 */
@Injectable()
export class DeleteSnapshot {
  private readonly deletion: DeleteCopy<Snapshot>;

  constructor(uow: UnitOfWork, snapshots: SnapshotRepository, acceptance: OperationAcceptance, health: ProviderHealth, clock: Clock) {
    this.deletion = new DeleteCopy(snapshotCopies(snapshots), uow, acceptance, health, clock);
  }

  async execute(principal: Principal | SystemActor, input: { snapshotId: string; reason?: 'customer' | 'expired' }, ip: string | null): Promise<{ snapshot: Snapshot; operation: Operation }> {
    const { copy, operation } = await this.deletion.execute(principal, { id: input.snapshotId, reason: input.reason }, ip);
    return { snapshot: copy, operation };
  }

  /** The snapshot's row locked by the caller. */
  async deleteLocked(principal: Principal | SystemActor, snapshot: Snapshot, reason: 'customer' | 'expired', ip: string | null): Promise<{ snapshot: Snapshot; operation: Operation }> {
    const { copy, operation } = await this.deletion.deleteLocked(principal, snapshot, reason, ip);
    return { snapshot: copy, operation };
  }
}

/** PATCH /v1/snapshots/{id} {name?, labels?, auto_renew?}: synchronous; audited `snapshot.update` with what changed. */
@Injectable()
export class UpdateSnapshot {
  private readonly updates: UpdateCopy<Snapshot>;

  constructor(uow: UnitOfWork, snapshots: SnapshotRepository, audit: AuditTrail) {
    this.updates = new UpdateCopy(snapshotCopies(snapshots), uow, audit);
  }

  execute(principal: Principal, input: { snapshotId: string; name?: string; labels?: Record<string, unknown>; autoRenew?: unknown }, ip: string | null): Promise<Snapshot> {
    return this.updates.execute(principal, { id: input.snapshotId, name: input.name, labels: input.labels, autoRenew: input.autoRenew }, ip);
  }
}

/** GET /v1/snapshots and GET /v1/snapshots/{id}: the organization's snapshots (deleted ones by id, or with status=deleted). */
@Injectable()
export class SnapshotQueries {
  constructor(private readonly snapshots: SnapshotRepository) {}

  async get(principal: Principal, id: string): Promise<Snapshot> {
    const s = await this.snapshots.findInOrg(principal.orgId, id);
    if (!s) throw notFound(`Snapshot ${id} not found`);
    return s;
  }

  async list(
    principal: Principal,
    input: { limit?: string; cursor?: string; volumeId?: string; region?: string; status?: SnapshotStatus; label?: string | string[] },
  ): Promise<{ snapshots: Snapshot[]; nextCursor: string | null }> {
    const limit = parseLimit(input.limit);
    const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor);
    const selectors = input.label === undefined ? [] : Array.isArray(input.label) ? input.label : [input.label];
    const page = await this.snapshots.listInOrg(principal.orgId, {
      limit,
      after,
      filter: { volumeId: input.volumeId, regionId: input.region, status: input.status, labels: selectors.map((s) => parseLabelSelector(s)) },
    });
    return { snapshots: page.items, nextCursor: page.next && encodeCursor(page.next) };
  }
}
