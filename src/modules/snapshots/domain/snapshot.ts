import { DomainError, invalidRequest, invalidState } from '../../../shared/kernel/errors/domain-error';
import { Currency, Money, PricePair } from '../../../shared/kernel/money/money';
import { DeletedReason, PrepaidTerm, RenewalQuote, TermMonths, presentTerm, termAmount } from '../../prepaid/domain/term';

/**
 * A volume snapshot: a point-in-time copy of a disk, bought for a prepaid term like a disk
 * (`size_gb × snapshot_price_per_gb_month[currency] × term_months`), restorable as a new disk.
 * It outlives its disk. It takes no capacity of its region.
 */
export const SNAPSHOT_STATUSES = ['creating', 'available', 'suspended', 'deleting', 'deleted'] as const;
export type SnapshotStatus = (typeof SNAPSHOT_STATUSES)[number];

/** Live snapshots (not deleted) a disk may have, and an organization. */
export const SNAPSHOTS_PER_VOLUME = 10;
export const SNAPSHOTS_PER_ORGANIZATION = 100;

export interface Snapshot extends PrepaidTerm {
  id: string;
  orgId: string;
  name: string;
  status: SnapshotStatus;
  volumeId: string;
  regionId: string;
  zoneId: string;
  type: string;
  sizeGb: number;
  deletedAt: Date | null;
  deletedReason: DeletedReason | null;
}

export function presentSnapshot(s: Snapshot) {
  return {
    id: s.id,
    name: s.name,
    status: s.status,
    volume_id: s.volumeId,
    region: s.regionId,
    size_gb: s.sizeGb,
    type: s.type,
    ...presentTerm(s, 'price_per_gb_month'),
    deleted_at: s.deletedAt ? s.deletedAt.toISOString() : null,
    deleted_reason: s.deletedReason,
  };
}

/** The price of a snapshot of `sizeGb` for `termMonths`, exact. */
export function snapshotAmount(price: PricePair, currency: Currency, termMonths: number, sizeGb: number): Money {
  return termAmount(price, currency, termMonths, sizeGb);
}

/** 409 invalid_state naming the snapshot's unfinished operation. */
export function snapshotBusy(s: Snapshot): DomainError {
  return new DomainError('invalid_state', `Snapshot ${s.id} has an unfinished operation ${s.operationId}; wait for it to end`, { operation_id: s.operationId });
}

/** A renewal's charge at the frozen price (409 invalid_state when deleted or being deleted, or busy). */
export function quoteSnapshotRenewal(s: Snapshot, termMonths: TermMonths, currency?: Currency): RenewalQuote {
  if (s.status === 'deleted' || s.status === 'deleting') throw invalidState(`Snapshot ${s.id} is ${s.status} and cannot be renewed`);
  if (s.status === 'creating') throw invalidState(`Snapshot ${s.id} is still being created; renew it once it is available`);
  if (s.operationId) throw snapshotBusy(s);
  return { termMonths, amount: snapshotAmount(s.price, currency ?? s.billing.currency, termMonths, s.sizeGb) };
}

/** 409 quota_exceeded: a disk's or an organization's live snapshots are at their limit. */
export function snapshotQuota(scope: 'volume' | 'organization', limit: number): DomainError {
  return new DomainError(
    'quota_exceeded',
    scope === 'volume'
      ? `This disk has ${limit} snapshots already (the limit); delete one first`
      : `The organization has ${limit} snapshots already (the limit); delete one first`,
    { limit },
  );
}

export const SNAPSHOT_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
export const SNAPSHOT_NAME_RULE = '1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit';

/** A snapshot's name, or 400 naming `field`. Names need not be unique. */
export function checkSnapshotName(value: unknown, field = 'name'): string {
  if (typeof value !== 'string' || !SNAPSHOT_NAME_PATTERN.test(value)) throw invalidRequest(`${field} must be ${SNAPSHOT_NAME_RULE}`, { field });
  return value;
}
