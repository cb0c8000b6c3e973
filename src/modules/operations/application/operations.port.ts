import { EventRecord } from '../../webhooks/domain/events';
import { Page, PageCursor } from '../../../shared/kernel/pagination/cursor';
import { Operation, OperationStatus } from '../domain/operation';

export interface OperationListQuery {
  volumeId?: string;
  vmId?: string;
  deploymentId?: string;
  status?: OperationStatus;
  limit: number;
  after?: PageCursor;
}

/** Operations of organizations, and the worker's claims on them. */
export abstract class OperationRepository {
  /**
   * Stores a new operation and tells the workers once the transaction commits. invalid_state when its volume already has an unfinished operation
   * (the database's one-unfinished-operation-per-volume index decides, across processes).
   */
  abstract create(operation: Operation): Promise<void>;
  /**
   * create() of several operations in one statement (a sweep's batch); the workers are told once.
   * A violation of a one-unfinished-operation index fails the whole statement: the caller has
   * claimed rows with no unfinished operation.
   */
  abstract createMany(operations: readonly Operation[]): Promise<void>;
  abstract findInOrg(orgId: string, id: string): Promise<Operation | undefined>;
  /** Newest first. */
  abstract list(orgId: string, query: OperationListQuery): Promise<Page<Operation>>;
  abstract hasUnfinishedForVolume(volumeId: string): Promise<boolean>;
  /** The id of the volume's unfinished (pending or running) operation, if any. */
  abstract unfinishedForVolume(volumeId: string): Promise<string | undefined>;
  /**
   * Claims (in the active transaction) up to `limit` operations for `workerId`, oldest first:
   * pending ones, and running ones whose lease ended before `now`; each becomes running under a
   * lease until `leaseUntil`, its attempt counted (Operation.claim). Rows another transaction
   * holds are skipped, never waited for. The ids claimed, oldest first.
   */
  abstract claim(workerId: string, now: Date, leaseUntil: Date, limit: number): Promise<string[]>;
  /**
   * Moves the lease of these operations, where `workerId` still holds them (running), to
   * `leaseUntil`: a live worker keeps what it has claimed while it works through a batch. Rows
   * another transaction holds are skipped (a step is writing them, with a lease of its own).
   * How many were extended.
   */
  abstract extendLeases(workerId: string, ids: readonly string[], leaseUntil: Date): Promise<number>;
  /** Locks one operation (in the active transaction), waiting for other holders. */
  abstract lock(id: string): Promise<Operation | undefined>;
  /** Locks these operations (in the active transaction, in id order), waiting for other holders. */
  abstract lockMany(ids: readonly string[]): Promise<Operation[]>;
  /** Writes the operation's status, steps, result, error and lease. */
  abstract save(operation: Operation): Promise<void>;
  /**
   * save() of several operations, in one statement. They must be locked by the active
   * transaction (lockMany). `events` are recorded in the webhook outbox by the same statement
   * (as EventOutbox.recordMany would: only those an enabled endpoint subscribes to).
   */
  abstract saveMany(operations: readonly Operation[], events?: readonly EventRecord[]): Promise<void>;
}
