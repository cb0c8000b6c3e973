import { PricePair } from '../../../shared/kernel/money/money';

export const VOLUME_TYPES = ['premium', 'ssd'] as const;
export type VolumeType = (typeof VOLUME_TYPES)[number];

export function isVolumeType(value: unknown): value is VolumeType {
  return typeof value === 'string' && (VOLUME_TYPES as readonly string[]).includes(value);
}

export interface Zone {
  id: string;
  available: boolean;
}

export interface VolumeOffer {
  regionId: string;
  type: VolumeType;
  minGb: number;
  maxGb: number;
  stepGb: number;
  terms: number[];
  perServerLimit: number;
  price: PricePair;
}

export interface RegionDefinition {
  id: string;
  name: string;
  capacityGb: number;
  zones: Zone[];
  offers: Omit<VolumeOffer, 'regionId'>[];
}
