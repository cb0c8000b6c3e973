import { PricePair } from '../../../shared/kernel/money/money';
import { Page, PageCursor } from '../../../shared/kernel/pagination/cursor';
import { Labels } from '../../prepaid/domain/labels';
import { DeletedReason, RenewedTerms, TermMonths } from '../../prepaid/domain/term';
import { Snapshot, SnapshotStatus } from '../domain/snapshot';

export type NewSnapshot = Omit<Snapshot, 'deletedAt' | 'suspendedAt' | 'releaseAt' | 'deletedReason'>;

export interface SnapshotFilter {
  volumeId?: string;
  regionId?: string;
  /** undefined: every status but deleted. */
  status?: SnapshotStatus;
  labels?: [string, string][];
}

export interface SnapshotChanges {
  name?: string;
  labels?: Labels;
  autoRenew?: { enabled: boolean; termMonths: TermMonths | null };
}

/** A snapshot whose deadline has come, claimed (row locked FOR UPDATE SKIP LOCKED) by a term sweep. */
export interface DueSnapshot {
  id: string;
  orgId: string;
  expiresAt: Date;
  termMonths: TermMonths;
  autoRenew: { enabled: boolean; termMonths: TermMonths | null };
}

/** The snapshots' rows. Every write runs in the caller's transaction. */
export abstract class SnapshotRepository {
  /**
   * Inserts a snapshot (its disk's and organization's live counts go up with it, in the database):
   * quota_exceeded (details.limit) when either is at its limit.
   */
  abstract create(s: NewSnapshot): Promise<Snapshot>;
  abstract findInOrg(orgId: string, id: string): Promise<Snapshot | undefined>;
  abstract lockInOrg(orgId: string, id: string): Promise<Snapshot | undefined>;
  /** Locks the snapshot's row by id alone (the worker). */
  abstract lock(id: string): Promise<Snapshot | undefined>;
  abstract listInOrg(orgId: string, query: { limit: number; after?: PageCursor; filter: SnapshotFilter }): Promise<Page<Snapshot>>;
  abstract update(id: string, changes: SnapshotChanges): Promise<void>;
  /** Names (or clears, null) the snapshot's unfinished operation. */
  abstract setOperation(id: string, operationId: string | null): Promise<void>;
  /** creating → available, its term counted from now. */
  abstract markAvailable(id: string, expiresAt: Date): Promise<void>;
  abstract markDeleting(id: string, operationId: string, reason: DeletedReason): Promise<void>;
  abstract markDeleted(id: string, at: Date, reason: DeletedReason): Promise<void>;
  abstract markSuspended(id: string, at: Date, releaseAt: Date): Promise<void>;
  /** A renewal: the new term, billing and expiry; a suspended snapshot becomes available again. */
  abstract saveRenewal(id: string, terms: RenewedTerms): Promise<void>;
  /** The region's snapshot price per GB-month; null when it sells none; undefined when there is no such region. */
  abstract regionPrice(regionId: string): Promise<PricePair | null | undefined>;
  /** Available snapshots with `expires_at <= now` and no unfinished operation (row-locked, SKIP LOCKED). */
  abstract claimExpired(now: Date, limit: number): Promise<DueSnapshot[]>;
  /** Suspended snapshots with `release_at <= now` and no unfinished operation (row-locked, SKIP LOCKED). */
  abstract claimReleasable(now: Date, limit: number): Promise<DueSnapshot[]>;
  /** Of these ids (copies the provider holds), those with no live row (deleted, or none) and no unfinished operation naming them (the orphan sweep). */
  abstract goneAmong(ids: readonly string[]): Promise<string[]>;
}
