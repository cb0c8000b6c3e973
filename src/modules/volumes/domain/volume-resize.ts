import { DomainError, invalidRequest, invalidState } from '../../../shared/kernel/errors/domain-error';
import { Money } from '../../../shared/kernel/money/money';
import { OperationStep } from '../../operations/domain/operation';
import { VolumeOffer } from '../../options/domain/catalog';
import { proratedCharge } from '../../prepaid/domain/term';
import { assertNotSuspended } from '../../prepaid/domain/suspension';
import { Volume } from './volume';

/**
 * Growing a disk (POST /v1/volumes/{id}/resize): the rules that need no database.
 * volume.resize's steps: payment_reserved (done at acceptance), resizing.
 */
export const resizeSteps = (): OperationStep[] => [
  { name: 'payment_reserved', status: 'succeeded' },
  { name: 'resizing', status: 'pending' },
];

/**
 * 400 naming size_gb unless the new size is larger than today's ("disks only grow"), a multiple
 * of the offer's step_gb and at most its max_gb. Returns the gigabytes added.
 */
export function checkNewSize(volume: Pick<Volume, 'id' | 'sizeGb' | 'type' | 'regionId'>, offer: Pick<VolumeOffer, 'maxGb' | 'stepGb'>, sizeGb: number): number {
  if (sizeGb <= volume.sizeGb) {
    throw invalidRequest(`size_gb must be larger than the disk's ${volume.sizeGb} GB: disks only grow; got ${sizeGb}`, { field: 'size_gb' });
  }
  if (sizeGb % offer.stepGb !== 0) {
    throw invalidRequest(`size_gb must be a multiple of ${offer.stepGb} for ${volume.type} in ${volume.regionId}; got ${sizeGb}`, { field: 'size_gb' });
  }
  if (sizeGb > offer.maxGb) {
    throw invalidRequest(`size_gb must be at most ${offer.maxGb} for ${volume.type} in ${volume.regionId}; got ${sizeGb}`, { field: 'size_gb' });
  }
  return sizeGb - volume.sizeGb;
}

/** 409 invalid_state unless the disk is available or attached (grown online), not suspended, its disk present. */
export function assertResizable(volume: Volume): void {
  assertNotSuspended(volume, 'Volume', 'resize it');
  if (volume.deletedAt || volume.status === 'deleted') throw invalidState(`Volume ${volume.id} is deleted`);
  if (volume.status !== 'available' && volume.status !== 'attached') {
    throw invalidState(`Volume ${volume.id} is ${volume.status}; only an available or attached volume can be resized`);
  }
}

/** The charge of growing `volume` by `addedGb` now: addedGb × frozen price_per_gb_month[billing currency] × r, rounded up. */
export function resizeAmount(volume: Pick<Volume, 'price' | 'billing' | 'expiresAt'>, addedGb: number, now: Date): Money {
  return proratedCharge(volume.price[volume.billing.currency].times(addedGb), volume.expiresAt, now);
}

/** 409 out_of_stock: the region cannot hold the gigabytes a resize adds. */
export const noCapacityForResize = (regionId: string, addedGb: number): DomainError =>
  new DomainError('out_of_stock', `Region ${regionId} has fewer than ${addedGb} GB free for this resize; nothing was reserved`);
