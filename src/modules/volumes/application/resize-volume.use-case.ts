import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { invalidState, notFound } from '../../../shared/kernel/errors/domain-error';
import { newId } from '../../../shared/kernel/ids/ids';
import { Money } from '../../../shared/kernel/money/money';
import { auditActor } from '../../audit/application/audit-actor';
import { Principal } from '../../auth/domain/principal';
import { OperationAcceptance } from '../../operations/application/operation-acceptance.port';
import { OperationRepository } from '../../operations/application/operations.port';
import { Operation } from '../../operations/domain/operation';
import { Catalog } from '../../options/application/catalog.port';
import { insufficientBalance } from '../../wallet/domain/wallet-errors';
import { Volume, assertDiskPresent } from '../domain/volume';
import { operationInTheWay, serverBeingDeleted } from '../domain/volume-actions';
import { assertResizable, checkNewSize, resizeAmount, resizeSteps } from '../domain/volume-resize';
import { resizeParams } from './volume-action-params';
import { VolumeResizes } from './volume-resizes.port';
import { ServerRepository, VolumeRepository } from './volumes.port';

export interface ResizeVolumeInput {
  volumeId: string;
  sizeGb: number;
}

/**
 * POST /v1/volumes/{id}/resize {size_gb, dry_run?}. In one transaction, with the volume's row
 * locked (so a renewal, a delete or another resize of the disk is accepted before or after it):
 * 404; 400 naming size_gb (disks only grow, a multiple of step_gb, at most max_gb); 409
 * invalid_state naming the unfinished operation (details.operation_id), or the vm.delete of the
 * server it is attached to (whose row is held FOR SHARE until commit), then the volume's status
 * (suspended, deleting, creating, its disk missing); the price for the rest of the term
 * (added GB × the frozen price_per_gb_month × r, rounded up); then, unless it is a dry run, the
 * added gigabytes reserved in the region's capacity (409 out_of_stock) and the volume.resize
 * operation accepted with its hold and audit row (402). A dry run answers the price and
 * changes nothing.
 */
@Injectable()
export class ResizeVolume {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly volumes: VolumeRepository,
    private readonly operations: OperationRepository,
    private readonly catalog: Catalog,
    private readonly resizes: VolumeResizes,
    private readonly servers: ServerRepository,
    private readonly acceptance: OperationAcceptance,
    private readonly clock: Clock,
  ) {}

  /** The price the resize would be charged now; nothing reserved or changed. */
  quote(principal: Principal, input: ResizeVolumeInput): Promise<Money> {
    return this.uow.run(async () => (await this.check(principal, input, false)).amount);
  }

  execute(principal: Principal, input: ResizeVolumeInput, ip: string | null): Promise<{ volume: Volume; operation: Operation }> {
    return this.uow.run(async () => {
      const { volume, addedGb, amount } = await this.check(principal, input, true);
      await this.resizes.reserve(volume.id, volume.regionId, addedGb);
      const operation = Operation.create({
        id: newId('op'),
        orgId: principal.orgId,
        type: 'volume.resize',
        vmId: volume.server?.id ?? null,
        volumeId: volume.id,
        steps: resizeSteps(),
        params: resizeParams.write({ sizeGb: input.sizeGb, addedGb, amount }),
        createdAt: this.clock.now(),
      });
      const outcome = await this.acceptance.accept({
        operation,
        hold: amount,
        audit: {
          orgId: principal.orgId,
          ...auditActor(principal),
          action: 'volume.resize',
          targetId: volume.id,
          ipAddress: ip,
          data: {
            operation_id: operation.id,
            size_gb_before: volume.sizeGb,
            size_gb: input.sizeGb,
            currency: amount.currency,
            amount: amount.format(),
          },
        },
      });
      if (outcome.kind === 'busy') throw operationInTheWay(volume.id, outcome.operationId);
      if (outcome.kind === 'insufficient') throw insufficientBalance(amount, outcome.available);
      return { volume, operation };
    });
  }

  private async check(principal: Principal, input: ResizeVolumeInput, lock: boolean): Promise<{ volume: Volume; addedGb: number; amount: Money }> {
    const volume = lock ? await this.volumes.lockInOrg(principal.orgId, input.volumeId) : await this.volumes.findInOrg(principal.orgId, input.volumeId);
    if (!volume) throw notFound(`Volume ${input.volumeId} not found`);
    const offer = await this.catalog.offer(volume.regionId, volume.type);
    if (!offer) throw invalidState(`Region ${volume.regionId} no longer sells ${volume.type} disks; volume ${volume.id} cannot be resized`);
    const addedGb = checkNewSize(volume, offer, input.sizeGb);
    const inTheWay = await this.operations.unfinishedForVolume(volume.id);
    if (inTheWay) throw operationInTheWay(volume.id, inTheWay);
    if (volume.server) {
      // The server's row FOR SHARE: a DELETE of the server (FOR UPDATE) is accepted before or after this resize, never beside it.
      const deletion = await this.servers.deletion(volume.server.id);
      if (deletion) throw serverBeingDeleted(volume, deletion.operationId);
    }
    assertResizable(volume);
    assertDiskPresent(volume, 'resized');
    return { volume, addedGb, amount: resizeAmount(volume, addedGb, this.clock.now()) };
  }
}
