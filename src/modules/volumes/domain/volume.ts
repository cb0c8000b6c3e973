import { Money, PricePair } from '../../../shared/kernel/money/money';
import { VolumeType } from '../../options/domain/catalog';

export const VOLUME_STATUSES = ['creating', 'available', 'attached', 'deleting', 'deleted'] as const;
export type VolumeStatus = (typeof VOLUME_STATUSES)[number];
export const RENEWAL_TERMS = [1, 3, 12] as const;
export type TermMonths = (typeof RENEWAL_TERMS)[number];

export function isTerm(value: unknown): value is TermMonths {
  return typeof value === 'number' && (RENEWAL_TERMS as readonly number[]).includes(value);
}

export interface Volume {
  id: string;
  orgId: string;
  name: string;
  status: VolumeStatus;
  type: VolumeType;
  regionId: string;
  zoneId: string;
  sizeGb: number;
  server: { id: string; name: string } | null;
  mountPath: string | null;
  mounted: boolean;
  termMonths: TermMonths;
  billing: Money;
  price: PricePair;
  expiresAt: Date;
  note: string | null;
  createdAt: Date;
  deletedAt: Date | null;
}

/** The charge for `termMonths` months of the volume at the price it was bought at. Exact. */
export function termPrice(volume: Pick<Volume, 'sizeGb' | 'price'>, currency: Money['currency'], termMonths: number): Money {
  return volume.price[currency].times(volume.sizeGb).times(termMonths);
}
