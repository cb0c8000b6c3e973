import { Injectable, OnModuleInit } from '@nestjs/common';
import { Clock, addMonthsClamped } from '../../../shared/kernel/clock/clock';
import { invalidState } from '../../../shared/kernel/errors/domain-error';
import { OperationExecutor, OperationExecutors, OperationStepExecutor } from '../../operations/application/operation-executors';
import { ProviderTruth, readProviderTruth } from '../../operations/application/provider-truth';
import { JsonObject, Operation } from '../../operations/domain/operation';
import { announceCopy, commitRenewal, lockOperationCopy } from '../../prepaid/application/copy-executors';
import { ProviderSnapshot } from '../../storage-provider/application/block-storage.port';
import { ProviderGateway } from '../../storage-provider/application/provider-gateway';
import { EventOutbox } from '../../webhooks/application/event-outbox.port';
import { Snapshot, presentSnapshot } from '../domain/snapshot';
import { snapshotParams } from './snapshot-params';
import { SnapshotRepository } from './snapshots.port';

/** The provider's idempotency key of a step's call: `<operation id>/<step>`. */
const key = (op: Operation, step: string): string => `${op.id}/${step}`;

/** Shared by the executors: registration, the snapshot of an operation under lock, its deletion. (Injectable: its constructor's types are the subclasses'.) */
@Injectable()
abstract class SnapshotExecutor implements OperationExecutor, OnModuleInit {
  abstract readonly type: 'snapshot.create' | 'snapshot.renew' | 'snapshot.delete';
  abstract readonly steps: readonly OperationStepExecutor[];

  constructor(
    protected readonly snapshots: SnapshotRepository,
    protected readonly provider: ProviderGateway,
    protected readonly outbox: EventOutbox,
    protected readonly clock: Clock,
    private readonly executors: OperationExecutors,
  ) {}

  onModuleInit(): void {
    this.executors.register(this);
  }

  protected async locked(op: Operation): Promise<Snapshot> {
    return lockOperationCopy(this.snapshots, op, snapshotParams.read(op.params).snapshotId, 'Snapshot');
  }

  /** Marks it deleted and announces it (snapshot.deleted with its deleted_reason). */
  protected async deleted(s: Snapshot, reason: 'customer' | 'expired' | 'purchase_failed'): Promise<void> {
    const now = this.clock.now();
    await this.snapshots.markDeleted(s.id, now, reason);
    await announceCopy(this.snapshots, this.outbox, s, { type: 'snapshot.deleted', now, present: presentSnapshot });
  }
}

/**
 * snapshot.create: `payment_reserved` (done at acceptance), `snapshotting`: the provider copies
 * the disk (idempotent by the snapshot id; a disk gone is a final refusal). Success: `available`,
 * `expires_at` = now + term, the hold captured by the engine. Failure: whatever the provider made
 * is deleted (compensate), the snapshot `deleted` (purchase_failed), the hold released.
 */
@Injectable()
export class CreateSnapshotExecutor extends SnapshotExecutor {
  readonly type = 'snapshot.create' as const;
  readonly steps: readonly OperationStepExecutor[] = [
    { name: 'payment_reserved', commit: async () => undefined },
    {
      name: 'snapshotting',
      perform: async (op) => {
        const p = snapshotParams.read(op.params);
        const made = await this.provider.createSnapshot({ snapshotId: p.snapshotId, step: key(op, 'snapshotting'), volumeId: p.volumeId });
        return { provider_id: made.providerId };
      },
      commit: (op) => this.ready(op),
    },
  ];

  private async ready(op: Operation): Promise<JsonObject> {
    const p = snapshotParams.read(op.params);
    const s = await this.locked(op);
    if (s.status !== 'creating') throw invalidState(`Snapshot ${s.id} is ${s.status}, not creating`);
    if (!p.termMonths || !p.amount) throw invalidState(`Operation ${op.id} names no term`);
    const expiresAt = addMonthsClamped(this.clock.now(), p.termMonths);
    await this.snapshots.markAvailable(s.id, expiresAt);
    return {
      snapshot_id: s.id,
      size_gb: s.sizeGb,
      expires_at: expiresAt.toISOString(),
      charged: { currency: p.amount.currency, amount: p.amount.format() },
    };
  }

  observe(op: Operation): Promise<ProviderTruth<ProviderSnapshot | null>> {
    return readProviderTruth(() => this.provider.getSnapshot(snapshotParams.read(op.params).snapshotId));
  }

  async compensate(op: Operation): Promise<void> {
    await this.provider.deleteSnapshot({ snapshotId: snapshotParams.read(op.params).snapshotId, step: key(op, 'compensate') });
  }

  async failed(op: Operation): Promise<void> {
    const s = await this.snapshots.lock(snapshotParams.read(op.params).snapshotId);
    if (!s || s.status === 'deleted') return;
    await this.deleted(s, 'purchase_failed');
  }
}

/**
 * snapshot.renew: one step, `renewing`, no provider call: `expires_at` = max(expires_at, now) +
 * term, term and billing set; a suspended snapshot is available again. A snapshot deleted
 * meanwhile fails it (the hold released).
 */
@Injectable()
export class RenewSnapshotExecutor extends SnapshotExecutor {
  readonly type = 'snapshot.renew' as const;
  readonly steps: readonly OperationStepExecutor[] = [{ name: 'renewing', commit: (op) => this.renew(op) }];

  private async renew(op: Operation): Promise<JsonObject> {
    const p = snapshotParams.read(op.params);
    const s = await this.locked(op);
    if (s.status === 'deleted' || s.status === 'deleting') throw invalidState(`Snapshot ${s.id} is ${s.status} and cannot be renewed`);
    return commitRenewal(this.snapshots, this.clock, op, s, p, 'snapshot_id');
  }

  async failed(op: Operation): Promise<void> {
    const s = await this.snapshots.lock(snapshotParams.read(op.params).snapshotId);
    if (s && s.operationId === op.id) await this.snapshots.setOperation(s.id, null);
  }
}

/**
 * snapshot.delete: one step, `deleting`: the provider deletes the copy (deleting one it no longer
 * holds succeeds). Success: `deleted`, announced (snapshot.deleted with deleted_reason). A failure
 * leaves it `deleting` with the provider's truth deciding: gone there, it is deleted here too.
 */
@Injectable()
export class DeleteSnapshotExecutor extends SnapshotExecutor {
  readonly type = 'snapshot.delete' as const;
  readonly steps: readonly OperationStepExecutor[] = [
    {
      name: 'deleting',
      perform: async (op) => {
        await this.provider.deleteSnapshot({ snapshotId: snapshotParams.read(op.params).snapshotId, step: key(op, 'deleting') });
        return {};
      },
      commit: async (op) => {
        const s = await this.locked(op);
        await this.deleted(s, s.deletedReason === 'expired' ? 'expired' : 'customer');
        return { snapshot_id: s.id, deleted_at: this.clock.now().toISOString() };
      },
    },
  ];

  observe(op: Operation): Promise<ProviderTruth<ProviderSnapshot | null>> {
    return readProviderTruth(() => this.provider.getSnapshot(snapshotParams.read(op.params).snapshotId));
  }

  async failed(op: Operation, _error: unknown, truth?: ProviderTruth<unknown>): Promise<void> {
    const s = await this.snapshots.lock(snapshotParams.read(op.params).snapshotId);
    if (!s || s.status === 'deleted') return;
    if (truth?.known && truth.value === null) {
      // The provider deleted it (the answer was lost): deleted here too.
      await this.deleted(s, s.deletedReason === 'expired' ? 'expired' : 'customer');
      return;
    }
    // Still there (or unknown): left `deleting` with no operation, so a DELETE may be sent again.
    await this.snapshots.setOperation(s.id, null);
  }
}
