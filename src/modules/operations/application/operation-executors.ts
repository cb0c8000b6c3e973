import { Injectable } from '@nestjs/common';
import { JsonObject, Operation, OperationError, OperationType } from '../domain/operation';
import type { ProviderTruth } from './provider-truth';

/**
 * Thrown by a step's `perform` when the external service it calls is unavailable for a while
 * (the storage provider's provider_unavailable). The worker keeps the step and retries it with
 * exponential backoff (StepRetryPolicy), not counted as an attempt, until the retry window
 * closes; then the operation fails with `code`.
 */
export class StepUnavailable extends Error {
  constructor(
    message: string,
    readonly code: 'provider_unavailable' = 'provider_unavailable',
    /** The service that was unavailable, as the operation's error names it ("storage provider", "compute provider"). */
    readonly provider = 'storage provider',
  ) {
    super(message);
    this.name = 'StepUnavailable';
  }
}

/**
 * One step of an operation, as named in its `steps`. The worker advances a step as:
 *
 * 1. (only when the step has `perform`) a short transaction that records the step `running`
 *    and renews the lease;
 * 2. `perform`, outside any transaction and row lock: the slow external call (a storage
 *    provider). It may run again for the same operation and step (a crash, a lost answer, a
 *    retry after a transient error), so it must be idempotent by (operation id, step name);
 * 3. a short transaction that locks the operation, checks the worker still holds it, runs
 *    `commit` and records the step `succeeded` (and, after the last step, the operation
 *    `succeeded` with the hold captured).
 *
 * Steps 1 and 3 are usually shared: the start in the transaction of the step before (or of the
 * worker's batch), and the commits of the steps several operations performed meanwhile in one
 * transaction (AdvanceOperations.commitSteps). So `commit` must not assume it is the only step
 * of its transaction; a DomainError it throws rolls the shared transaction back, and the
 * operation commits alone afterwards.
 *
 * A DomainError thrown by `perform` or `commit` fails the operation (its hold released, the
 * failed transaction's writes rolled back). Any other error is taken as transient: the
 * operation's lease ends and a worker retries the step, within the attempt limit.
 */
export interface OperationStepExecutor {
  readonly name: string;
  perform?(operation: Operation): Promise<JsonObject>;
  /** Writes the step's effects; the last step returns the operation's result. `performed` is perform's output. */
  commit(operation: Operation, performed: JsonObject | undefined): Promise<JsonObject | void>;
  /**
   * Optional set-based commit() for a claimed batch: writes the step's effects of many operations
   * in a few multi-row statements, in the active transaction. For a step with `perform`, the
   * worker first performs it for every operation of the batch, then commits those that performed
   * together, `performed` holding each one's output.
   * Returns the result of every operation it committed (`{}` for a step that is not the last);
   * an operation it leaves out must be left untouched (nothing written for it): the worker then
   * runs commit() for it alone, in a savepoint, which decides (a DomainError fails it alone).
   * So it leaves out whatever breaks a domain rule instead of throwing; any error it throws is
   * taken as transient (the whole batch is rolled back and retried).
   */
  commitMany?(operations: readonly Operation[], performed?: ReadonlyMap<string, JsonObject>): Promise<Map<string, JsonObject>>;
}

/**
 * Does the work of one type of operation, step by step. Implemented by the module that owns the
 * resource (volumes for volume.renew) and registered with OperationExecutors, so the worker stays generic.
 */
export interface OperationExecutor {
  readonly type: OperationType;
  /** In the order of the operation's `steps`. */
  readonly steps: readonly OperationStepExecutor[];
  /**
   * Undoes, outside any transaction, what earlier steps did outside the database (the provider's
   * disk of a failed purchase), once the operation is recorded failed. Best effort: an error is
   * logged (what is left over, `cli verify` reports).
   * An operation of an executor with `compensate` or `failed` is never failed in a transaction of
   * several operations: its steps may commit together with others' (the worker's batches), but a
   * failure rolls that transaction back and the operation goes on alone, through `observe`,
   * `failed` and `compensate`.
   */
  compensate?(operation: Operation): Promise<void>;
  /**
   * Reads, outside any transaction, what the external provider now holds of the operation's
   * resource (provider-truth.ts), before the operation is recorded failed: a call whose answer
   * was lost may have taken effect. Its result is handed to `failed`.
   */
  observe?(operation: Operation): Promise<ProviderTruth<unknown>>;
  /**
   * In the transaction that records the operation failed (and releases its hold): gives back what
   * the accepting request took (capacity, the volume's status), from what `observe` read when the
   * executor observes (undefined otherwise).
   */
  failed?(operation: Operation, error: OperationError, truth?: ProviderTruth<unknown>): Promise<void>;
}

/** The executors by operation type. */
@Injectable()
export class OperationExecutors {
  private readonly byType = new Map<OperationType, OperationExecutor>();

  register(executor: OperationExecutor): void {
    if (this.byType.has(executor.type)) throw new Error(`An executor for ${executor.type} is registered already`);
    this.byType.set(executor.type, executor);
  }

  get(type: OperationType): OperationExecutor | undefined {
    return this.byType.get(type);
  }
}
