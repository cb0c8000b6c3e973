import { AutoRenew, AutoRenewAttempt } from '../../prepaid/domain/auto-renew';

export type TermKind = 'volume' | 'server';

/** A resource whose deadline has come, claimed (row locked) by a term sweep's transaction. */
export interface DueResource {
  id: string;
  orgId: string;
  status: string;
  /** A volume's server (attached), else null. */
  serverId: string | null;
}

/** A live resource whose expiry notice for one offset is due. */
export interface NoticeDue {
  id: string;
  orgId: string;
  name: string;
  expiresAt: Date;
  autoRenew: AutoRenew;
}

/** A resource whose automatic renewal attempt is due, claimed (row locked). */
export interface AutoRenewDue {
  id: string;
  orgId: string;
  expiresAt: Date;
  /** The resource's own term. */
  termMonths: number;
  /** auto_renew.term_months (null: the resource's own). */
  autoTermMonths: number | null;
  /** The AUTO_RENEW_LEAD_S its schedule was computed with. */
  leadS: number;
}

/** What an attempt leaves on the resource: the last attempt as shown, and when the next comes. */
export interface AutoRenewOutcome {
  lastAttempt: AutoRenewAttempt;
  /** null: none for this term end (an accepted renewal runs); else the next attempt's time. */
  retryAt: Date | null;
  /** After a failed attempt: the wallet's last ledger position then (a credit after it wakes the resource up). */
  walletSeq: string | null;
}

/**
 * The rows the term sweeps read and write (terms.md "Exactly once, across processes"). Every
 * claim runs in the caller's transaction: it locks the due rows FOR UPDATE SKIP LOCKED (another
 * process's claim is skipped, never waited for), found through the partial indexes on the
 * deadline, the condition re-checked on the locked row's latest version; a bounded batch.
 */
export abstract class TermStore {
  /** Live, settled volumes (available or attached) with `expires_at <= now` and no unfinished operation. */
  abstract claimExpiredVolumes(now: Date, limit: number): Promise<DueResource[]>;
  /** Live, settled servers (running or stopped, bought) with `expires_at <= now` and no unfinished vm.* / template.* operation. */
  abstract claimExpiredServers(now: Date, limit: number): Promise<DueResource[]>;
  /**
   * Live, not suspended volumes or servers whose `expires_at` is in (now, now + offset], whose
   * term is longer than the offset (the offset was crossed after the purchase or the last
   * renewal), whose auto-renew is off or its last attempt failed, and without a notice for
   * (resource, expires_at, offset). The notices' `expires_at` is the resource's to the
   * millisecond (as the API shows it and as recordNotices stores it).
   */
  abstract claimNoticesDue(kind: 'volume' | 'server', now: Date, offsetS: number, limit: number): Promise<NoticeDue[]>;
  /** Records the notices sent (the primary key keeps one per (resource, expires_at, offset)); the ids actually recorded. */
  abstract recordNotices(notices: readonly { resourceId: string; orgId: string; expiresAt: Date; offsetS: number; sentAt: Date }[]): Promise<Set<string>>;
  /** Suspended volumes with `release_at <= now` and no unfinished operation. */
  abstract claimReleasableVolumes(now: Date, limit: number): Promise<DueResource[]>;
  /** Suspended servers with `release_at <= now` and no unfinished vm.* / template.* operation. */
  abstract claimReleasableServers(now: Date, limit: number): Promise<DueResource[]>;
  /** The released volumes become `deleting`, `deleted_reason: "expired"` (their volume.delete deletes the disks); one statement. */
  abstract markVolumesReleasing(ids: readonly string[]): Promise<void>;
  /** The volumes become `suspended` (each keeps its server until its volume.suspend detaches it, named in `previous_server_id`); one statement. */
  abstract markVolumesSuspended(volumes: readonly { id: string; previousServerId: string | null }[], suspendedAt: Date, releaseAt: Date): Promise<void>;
  /** The servers become `suspended`, `power_before` their status; one statement. */
  abstract markServersSuspended(ids: readonly string[], suspendedAt: Date, releaseAt: Date): Promise<void>;
  /** Locks the volume's row; its status and server, or undefined when it does not exist. */
  abstract lockVolume(id: string): Promise<{ status: string; serverId: string | null; deleted: boolean } | undefined>;
  abstract lockServer(id: string): Promise<{ status: string; deleted: boolean } | undefined>;
  /** Locks these volumes' rows (in id order): whether each is deleted, by id; the ids that do not exist are absent. */
  abstract lockVolumes(ids: readonly string[]): Promise<Map<string, { deleted: boolean }>>;
  /** Locks these servers' rows (in id order); the ids found. */
  abstract lockServers(ids: readonly string[]): Promise<Set<string>>;
  /** volumeUnmounted() of several volumes, one statement. */
  abstract volumesUnmounted(ids: readonly string[]): Promise<void>;
  /** volumeDetached() of several volumes, one statement. */
  abstract volumesDetached(ids: readonly string[]): Promise<void>;
  /** volume.suspend's unmounting step done: mounted false. */
  abstract volumeUnmounted(id: string): Promise<void>;
  /** volume.suspend's detaching step done: no server, no mount path. */
  abstract volumeDetached(id: string): Promise<void>;

  /**
   * Resources with auto-renew on whose next attempt is due (`auto_renew_next_at <= now`), live
   * (suspended ones too), with no unfinished operation, no automatic renewal accepted for their
   * `expires_at` and an organization not suspended.
   */
  abstract claimAutoRenewDue(kind: TermKind, now: Date, limit: number): Promise<AutoRenewDue[]>;
  /** Like claimAutoRenewDue, for those waiting after a failed attempt whose wallet has been credited in their currency since. */
  abstract claimAutoRenewCredited(kind: TermKind, now: Date, limit: number): Promise<AutoRenewDue[]>;
  /** The organizations' last wallet ledger positions ('0' when none), one read. */
  abstract walletSeqs(orgIds: readonly string[]): Promise<Map<string, string>>;
  /** Records attempts, one statement: the resource ids recorded (an accepted one refused by the unique key, one per (resource, expires_at), is left out). */
  abstract recordAutoRenewAttempts(attempts: readonly { resourceId: string; orgId: string; expiresAt: Date; at: Date; outcome: AutoRenewAttempt['outcome']; operationId: string | null }[]): Promise<Set<string>>;
  /** Stores each attempt's outcome on its resource (its next_attempt_at follows), one statement for resources of one kind. */
  abstract saveAutoRenewOutcomes(kind: TermKind, outcomes: readonly { id: string; outcome: AutoRenewOutcome }[]): Promise<void>;
  /** Pushes the next attempt to `retryAt` without an attempt (the renewal was refused for another reason than money). */
  abstract postponeAutoRenew(kind: TermKind, id: string, retryAt: Date): Promise<void>;
  /** Reschedules with another AUTO_RENEW_LEAD_S (the setting changed since the schedule was computed). */
  abstract setAutoRenewLead(kind: TermKind, id: string, leadS: number): Promise<void>;
  /** Locks the resource's row; its organization, status and suspension times, or undefined when it does not exist. */
  abstract lockSuspension(kind: 'volume' | 'server', id: string): Promise<SuspensionState | undefined>;
  /** Moves a suspended resource's `release_at`. */
  abstract setReleaseAt(kind: 'volume' | 'server', id: string, releaseAt: Date): Promise<void>;
}

/** A resource's suspension, as the retention extension reads it under the row lock. */
export interface SuspensionState {
  orgId: string;
  status: string;
  deleted: boolean;
  suspendedAt: Date | null;
  releaseAt: Date | null;
}
