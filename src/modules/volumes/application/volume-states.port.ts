import { Money } from '../../../shared/kernel/money/money';
import { VolumeStatus } from '../domain/volume';
import { TermMonths } from '../../prepaid/domain/term';

/** What a step of a volume action writes on the volume row; members left undefined stay as they are. */
export interface VolumeStateChange {
  status?: VolumeStatus;
  serverId?: string | null;
  mountPath?: string | null;
  mounted?: boolean;
  termMonths?: TermMonths;
  billing?: Money;
  expiresAt?: Date;
  /** Set: the volume is deleted (its capacity goes back to the region through the counter's trigger). */
  deletedAt?: Date;
  /** Set: the reconciliation sweep found the disk gone at the provider; null: found again. */
  diskMissingSince?: Date | null;
  /** A resize settled: the disk's size, and what a resize reserves (0: nothing). */
  sizeGb?: number;
  resizeReservedGb?: number;
}

/**
 * The volume row as the worker's executors of volume.create/attach/detach/delete change it (in
 * their step's short transaction, after locking the volume through VolumeRepository.lockInOrg).
 */
export abstract class VolumeStates {
  abstract apply(volumeId: string, change: VolumeStateChange): Promise<void>;
  /** Of these volume ids, those whose volume is deleted (or does not exist) and has no unfinished operation. */
  abstract goneAmong(volumeIds: readonly string[]): Promise<string[]>;
  /**
   * A page of the volumes the reconciliation sweep compares with the provider: not deleted, past
   * `creating`, no unfinished operation; those whose id comes after `after`, by id.
   */
  abstract settledAfter(after: string, limit: number): Promise<{ id: string; orgId: string }[]>;
  /** Whether the volume has an unfinished (pending or running) operation. */
  abstract busy(volumeId: string): Promise<boolean>;
}
