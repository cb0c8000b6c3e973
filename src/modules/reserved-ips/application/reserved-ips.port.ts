import { PricePair } from '../../../shared/kernel/money/money';
import { Page, PageCursor } from '../../../shared/kernel/pagination/cursor';
import { Labels } from '../../prepaid/domain/labels';
import { DeletedReason, RenewedTerms, TermMonths } from '../../prepaid/domain/term';
import { ReservedIp, ReservedIpStatus } from '../domain/reserved-ip';

export type NewReservedIp = Omit<ReservedIp, 'suspendedAt' | 'releaseAt' | 'releasedAt' | 'releasedReason' | 'serverId'>;

export interface ReservedIpFilter {
  regionId?: string;
  /** undefined: every status but released. */
  status?: ReservedIpStatus;
  labels?: [string, string][];
}

export interface ReservedIpChanges {
  labels?: Labels;
  autoRenew?: { enabled: boolean; termMonths: TermMonths | null };
}

/** A reservation whose deadline has come, claimed (row locked FOR UPDATE SKIP LOCKED) by a term sweep. */
export interface DueReservedIp {
  id: string;
  orgId: string;
  expiresAt: Date;
  termMonths: TermMonths;
  autoRenew: { enabled: boolean; termMonths: TermMonths | null };
}

/** A server as a reservation's acceptance sees it, its row locked. */
export interface TargetServer {
  id: string;
  orgId: string;
  regionId: string;
  status: string;
  instanceMissingSince: Date | null;
}

/** The reservations' rows and their region's pool. Every write runs in the caller's transaction. */
export abstract class ReservedIpRepository {
  /** The region's monthly price; null when it sells no reserved addresses; undefined when there is no such region. */
  abstract regionPrice(regionId: string): Promise<PricePair | null | undefined>;
  /**
   * Takes a free address of the region's pool for the reservation `id` (its cooldown over),
   * lowest first, skipping the rows other transactions hold (FOR UPDATE SKIP LOCKED): undefined
   * when none is free, then nothing is written.
   */
  abstract allocate(regionId: string, id: string, now: Date): Promise<string | undefined>;
  abstract create(r: NewReservedIp): Promise<ReservedIp>;
  abstract findInOrg(orgId: string, id: string): Promise<ReservedIp | undefined>;
  abstract lockInOrg(orgId: string, id: string): Promise<ReservedIp | undefined>;
  /** Locks the row by id alone (the worker). */
  abstract lock(id: string): Promise<ReservedIp | undefined>;
  abstract listInOrg(orgId: string, query: { limit: number; after?: PageCursor; filter: ReservedIpFilter }): Promise<Page<ReservedIp>>;
  abstract update(id: string, changes: ReservedIpChanges): Promise<void>;
  /** Names (or clears, null) the unfinished operation and the server it moves the address to. */
  abstract setOperation(id: string, operationId: string | null, pendingServerId?: string | null): Promise<void>;
  /** The organization's server, locked (FOR UPDATE); undefined when not its own. */
  abstract lockServer(orgId: string, serverId: string): Promise<TargetServer | undefined>;
  /** The reservation holding or about to hold the server, if any. */
  abstract holdingServer(serverId: string): Promise<string | undefined>;
  /** An unfinished operation naming the server (any type), the oldest, if any. */
  abstract unfinishedServerOperation(serverId: string): Promise<string | undefined>;
  /** allocating → available, its term counted from now; `done`: its operation ends here (no assignment follows). */
  abstract markAllocated(id: string, expiresAt: Date, done: boolean): Promise<void>;
  /** Assigned to `serverId` (no operation, no pending server). */
  abstract markAssigned(id: string, serverId: string): Promise<void>;
  /** Assigned to nothing: `available` (or kept `suspended`); no operation, no pending server. */
  abstract markUnassigned(id: string): Promise<void>;
  abstract markSuspended(id: string, at: Date, releaseAt: Date): Promise<void>;
  /** Released: its pool address free again after `cooldownUntil`. */
  abstract markReleased(id: string, at: Date, reason: DeletedReason, cooldownUntil: Date): Promise<void>;
  /** A renewal: the new term, billing and expiry; a suspended reservation becomes available again. */
  abstract saveRenewal(id: string, terms: RenewedTerms): Promise<void>;
  /** Available or assigned reservations with `expires_at <= now` and no unfinished operation (row-locked, SKIP LOCKED). */
  abstract claimExpired(now: Date, limit: number): Promise<DueReservedIp[]>;
  /** Suspended reservations with `release_at <= now` and no unfinished operation (row-locked, SKIP LOCKED). */
  abstract claimReleasable(now: Date, limit: number): Promise<DueReservedIp[]>;
  /** Every live reservation with no unfinished operation, as the database says it is assigned (reconciliation), by id after `after`. */
  abstract settledAfter(after: string, limit: number): Promise<{ id: string; orgId: string; ip: string; serverId: string | null }[]>;
}
