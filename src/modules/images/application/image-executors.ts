import { Injectable, OnModuleInit } from '@nestjs/common';
import { Clock, addMonthsClamped } from '../../../shared/kernel/clock/clock';
import { invalidState } from '../../../shared/kernel/errors/domain-error';
import { OperationExecutor, OperationExecutors, OperationStepExecutor } from '../../operations/application/operation-executors';
import { ProviderTruth, readProviderTruth } from '../../operations/application/provider-truth';
import { JsonObject, Operation } from '../../operations/domain/operation';
import { announceCopy, commitRenewal, lockOperationCopy } from '../../prepaid/application/copy-executors';
import { ComputeGateway } from '../../servers/application/compute-gateway';
import { ProviderImage } from '../../servers/application/compute-provider.port';
import { EventOutbox } from '../../webhooks/application/event-outbox.port';
import { ServerImage, presentImage } from '../domain/image';
import { imageParams } from './image-params';
import { ImageRepository } from './images.port';

/** The provider's idempotency key of a step's call: `<operation id>/<step>`. */
const key = (op: Operation, step: string): string => `${op.id}/${step}`;

/** Shared by the executors: registration, the image of an operation under lock, its deletion. (Injectable: its constructor's types are the subclasses'.) */
@Injectable()
abstract class ImageExecutor implements OperationExecutor, OnModuleInit {
  abstract readonly type: 'image.create' | 'image.renew' | 'image.delete';
  abstract readonly steps: readonly OperationStepExecutor[];

  constructor(
    protected readonly images: ImageRepository,
    protected readonly compute: ComputeGateway,
    protected readonly outbox: EventOutbox,
    protected readonly clock: Clock,
    private readonly executors: OperationExecutors,
  ) {}

  onModuleInit(): void {
    this.executors.register(this);
  }

  protected async locked(op: Operation): Promise<ServerImage> {
    return lockOperationCopy(this.images, op, imageParams.read(op.params).imageId, 'Image');
  }

  /** Marks it deleted and announces it (image.deleted with its deleted_reason). */
  protected async deleted(i: ServerImage, reason: 'customer' | 'expired' | 'purchase_failed'): Promise<void> {
    const now = this.clock.now();
    await this.images.markDeleted(i.id, now, reason);
    await announceCopy(this.images, this.outbox, i, { type: 'image.deleted', now, present: presentImage });
  }
}

/**
 * image.create: `payment_reserved` (done at acceptance), `imaging`: the compute provider copies
 * the server's boot disk (idempotent by the image id; a server without an instance is a final
 * refusal). Success: `available`, `expires_at` = now + term, the hold captured by the engine.
 * Failure: whatever the provider made is deleted (compensate), the image `deleted`
 * (purchase_failed), the hold released.
 */
@Injectable()
export class CreateImageExecutor extends ImageExecutor {
  readonly type = 'image.create' as const;
  readonly steps: readonly OperationStepExecutor[] = [
    { name: 'payment_reserved', commit: async () => undefined },
    {
      name: 'imaging',
      perform: async (op) => {
        const p = imageParams.read(op.params);
        const made = await this.compute.createImage({ imageId: p.imageId, step: key(op, 'imaging'), serverId: p.serverId });
        return { provider_id: made.providerId };
      },
      commit: (op) => this.ready(op),
    },
  ];

  private async ready(op: Operation): Promise<JsonObject> {
    const p = imageParams.read(op.params);
    const i = await this.locked(op);
    if (i.status !== 'creating') throw invalidState(`Image ${i.id} is ${i.status}, not creating`);
    if (!p.termMonths || !p.amount) throw invalidState(`Operation ${op.id} names no term`);
    const expiresAt = addMonthsClamped(this.clock.now(), p.termMonths);
    await this.images.markAvailable(i.id, expiresAt);
    return {
      image_id: i.id,
      disk_gb: i.diskGb,
      expires_at: expiresAt.toISOString(),
      charged: { currency: p.amount.currency, amount: p.amount.format() },
    };
  }

  observe(op: Operation): Promise<ProviderTruth<ProviderImage | null>> {
    return readProviderTruth(() => this.compute.getImage(imageParams.read(op.params).imageId));
  }

  async compensate(op: Operation): Promise<void> {
    await this.compute.deleteImage({ imageId: imageParams.read(op.params).imageId, step: key(op, 'compensate') });
  }

  async failed(op: Operation): Promise<void> {
    const i = await this.images.lock(imageParams.read(op.params).imageId);
    if (!i || i.status === 'deleted') return;
    await this.deleted(i, 'purchase_failed');
  }
}

/**
 * image.renew: one step, `renewing`, no provider call: `expires_at` = max(expires_at, now) +
 * term, term and billing set; a suspended image is available again. An image deleted meanwhile
 * fails it (the hold released).
 */
@Injectable()
export class RenewImageExecutor extends ImageExecutor {
  readonly type = 'image.renew' as const;
  readonly steps: readonly OperationStepExecutor[] = [{ name: 'renewing', commit: (op) => this.renew(op) }];

  private async renew(op: Operation): Promise<JsonObject> {
    const p = imageParams.read(op.params);
    const i = await this.locked(op);
    if (i.status === 'deleted' || i.status === 'deleting') throw invalidState(`Image ${i.id} is ${i.status} and cannot be renewed`);
    return commitRenewal(this.images, this.clock, op, i, p, 'image_id');
  }

  async failed(op: Operation): Promise<void> {
    const i = await this.images.lock(imageParams.read(op.params).imageId);
    if (i && i.operationId === op.id) await this.images.setOperation(i.id, null);
  }
}

/**
 * image.delete: one step, `deleting`: the compute provider deletes the copy (deleting one it no
 * longer holds succeeds). Success: `deleted`, announced (image.deleted with deleted_reason). A
 * failure leaves it `deleting` with the provider's truth deciding: gone there, it is deleted here too.
 */
@Injectable()
export class DeleteImageExecutor extends ImageExecutor {
  readonly type = 'image.delete' as const;
  readonly steps: readonly OperationStepExecutor[] = [
    {
      name: 'deleting',
      perform: async (op) => {
        await this.compute.deleteImage({ imageId: imageParams.read(op.params).imageId, step: key(op, 'deleting') });
        return {};
      },
      commit: async (op) => {
        const i = await this.locked(op);
        await this.deleted(i, i.deletedReason === 'expired' ? 'expired' : 'customer');
        return { image_id: i.id, deleted_at: this.clock.now().toISOString() };
      },
    },
  ];

  observe(op: Operation): Promise<ProviderTruth<ProviderImage | null>> {
    return readProviderTruth(() => this.compute.getImage(imageParams.read(op.params).imageId));
  }

  async failed(op: Operation, _error: unknown, truth?: ProviderTruth<unknown>): Promise<void> {
    const i = await this.images.lock(imageParams.read(op.params).imageId);
    if (!i || i.status === 'deleted') return;
    if (truth?.known && truth.value === null) {
      // The provider deleted it (the answer was lost): deleted here too.
      await this.deleted(i, i.deletedReason === 'expired' ? 'expired' : 'customer');
      return;
    }
    // Still there (or unknown): left `deleting` with no operation, so a DELETE may be sent again.
    await this.images.setOperation(i.id, null);
  }
}
