import { invalidState } from '../../../shared/kernel/errors/domain-error';
import { Money, PricePair } from '../../../shared/kernel/money/money';
import { VolumeType } from '../../options/domain/catalog';
import { Labels, matchesLabels } from '../../prepaid/domain/labels';
import { DeletedReason, TermMonths, termAmount } from '../../prepaid/domain/term';
import { AutoRenew } from '../../prepaid/domain/auto-renew';

export const VOLUME_STATUSES = ['creating', 'available', 'attached', 'suspended', 'deleting', 'deleted'] as const;
export type VolumeStatus = (typeof VOLUME_STATUSES)[number];
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
  /** Caller's key/value pairs; `{}` when none. */
  labels: Labels;
  /** While true, DELETE is refused (409 invalid_state). */
  deleteProtection: boolean;
  createdAt: Date;
  deletedAt: Date | null;
  /** Set while suspended (terms.md): when its term ended, and when it is released unless renewed. */
  suspendedAt?: Date | null;
  releaseAt?: Date | null;
  /** Why it was deleted (null while live, and for volumes deleted before reasons were kept). */
  deletedReason?: DeletedReason | null;
  /** The server its suspension detached it from, else null. */
  previousServerId?: string | null;
  /** Automatic renewal (terms.md); absent: off. */
  autoRenew?: AutoRenew;
  /** Set when the reconciliation sweep found the volume's disk gone at the provider: renewal and attach are refused (409). */
  diskMissingSince?: Date | null;
  /** Gigabytes a resize in flight has reserved in the region (0 otherwise). Not shown. */
  resizeReservedGb?: number;
}

/** 409 invalid_state for an action that needs the volume's disk when the provider no longer holds it. */
export function assertDiskPresent(volume: Pick<Volume, 'id' | 'diskMissingSince'>, action: string): void {
  if (volume.diskMissingSince) {
    throw invalidState(`Volume ${volume.id} has no disk at the storage provider (missing since ${volume.diskMissingSince.toISOString()}); it cannot be ${action}`);
  }
}

/** The charge for `termMonths` months of the volume at the price it was bought at. Exact. */
export function termPrice(volume: Pick<Volume, 'sizeGb' | 'price'>, currency: Money['currency'], termMonths: number): Money {
  return termAmount(volume.price, currency, termMonths, volume.sizeGb);
}

/** What GET /v1/volumes may filter on; every filter given must match. */
export interface VolumeFilter {
  regionId?: string;
  zoneId?: string;
  type?: VolumeType;
  /** Absent: every status but deleted. `deleted`: the deleted ones only. */
  status?: VolumeStatus;
  serverId?: string;
  name?: string;
  /** Every pair must be among the volume's labels. */
  labels?: [string, string][];
  /** expires_at strictly before this instant. */
  expiresBefore?: Date;
  /** Whether automatic renewal is on. */
  autoRenew?: boolean;
}

/** Whether the volume passes the filter (the SQL of the database adapter says the same). */
export function matchesFilter(v: Volume, f: VolumeFilter): boolean {
  const deleted = v.deletedAt !== null;
  if (f.status === undefined ? deleted : f.status === 'deleted' ? !deleted : deleted || v.status !== f.status) return false;
  if (f.regionId !== undefined && v.regionId !== f.regionId) return false;
  if (f.zoneId !== undefined && v.zoneId !== f.zoneId) return false;
  if (f.type !== undefined && v.type !== f.type) return false;
  if (f.serverId !== undefined && v.server?.id !== f.serverId) return false;
  if (f.name !== undefined && v.name !== f.name) return false;
  if (f.expiresBefore !== undefined && !(v.expiresAt.getTime() < f.expiresBefore.getTime())) return false;
  if (f.autoRenew !== undefined && (v.autoRenew?.enabled ?? false) !== f.autoRenew) return false;
  return matchesLabels(v.labels, f.labels ?? []);
}
