import { hostname } from 'node:os';
import { Injectable, Logger } from '@nestjs/common';
import { Settings } from '../../../shared/config/settings';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { DomainError } from '../../../shared/kernel/errors/domain-error';
import { randomBase62 } from '../../../shared/kernel/ids/ids';
import { WalletLedger } from '../../wallet/application/wallet.port';
import { OperationError } from '../domain/operation';
import { OperationExecutors } from './operation-executors';
import { OperationRepository } from './operations.port';

/** Operations claimed per batch. */
export const CLAIM_BATCH_SIZE = 20;
/** Claims after which an operation that keeps dying with its worker is failed instead of retried. */
export const MAX_ATTEMPTS = 5;

export type ExecutionOutcome = 'succeeded' | 'failed' | 'skipped';

export interface AdvanceReport {
  claimed: number;
  succeeded: number;
  failed: number;
  skipped: number;
}

/**
 * The worker's use case. One batch: claim up to CLAIM_BATCH_SIZE operations in one transaction
 * (FOR UPDATE SKIP LOCKED, so any number of processes share the queue without taking the same
 * row), mark them running under a lease, then execute each in its own transaction: the
 * resource change, the hold's capture and `succeeded` commit together, or nothing does and the
 * operation fails with its hold released. A process that dies leaves its operations running
 * until the lease ends; then any worker takes them over.
 */
@Injectable()
export class AdvanceOperations {
  readonly workerId = `${hostname()}:${process.pid}:${randomBase62(8)}`;
  private readonly logger = new Logger('AdvanceOperations');

  constructor(
    private readonly uow: UnitOfWork,
    private readonly operations: OperationRepository,
    private readonly executors: OperationExecutors,
    private readonly wallet: WalletLedger,
    private readonly clock: Clock,
    private readonly settings: Settings,
  ) {}

  /** Claims one batch and executes it. */
  async runOnce(): Promise<AdvanceReport> {
    const ids = await this.claim();
    const report: AdvanceReport = { claimed: ids.length, succeeded: 0, failed: 0, skipped: 0 };
    for (const id of ids) {
      try {
        report[await this.execute(id)] += 1;
      } catch (err) {
        // The database failed even to record the failure: the lease will expire and a worker retries.
        report.skipped += 1;
        this.logger.error({ msg: 'operation could not be advanced', operation_id: id, err: describe(err) });
      }
    }
    return report;
  }

  /** Runs batches until none is claimed (at most `maxBatches`). For tests and the worker's catch-up. */
  async runUntilIdle(maxBatches = 100): Promise<AdvanceReport> {
    const total: AdvanceReport = { claimed: 0, succeeded: 0, failed: 0, skipped: 0 };
    for (let i = 0; i < maxBatches; i++) {
      const r = await this.runOnce();
      total.claimed += r.claimed;
      total.succeeded += r.succeeded;
      total.failed += r.failed;
      total.skipped += r.skipped;
      if (r.claimed < CLAIM_BATCH_SIZE) break;
    }
    return total;
  }

  private claim(): Promise<string[]> {
    return this.uow.run(async () => {
      const now = this.clock.now();
      const leaseUntil = new Date(now.getTime() + this.settings.workerLeaseMs);
      const claimable = await this.operations.lockClaimable(now, CLAIM_BATCH_SIZE);
      for (const op of claimable) {
        op.claim(this.workerId, leaseUntil, now);
        await this.operations.save(op);
      }
      return claimable.map((op) => op.id);
    });
  }

  private async execute(id: string): Promise<ExecutionOutcome> {
    let failure: OperationError;
    try {
      return await this.uow.run(async () => {
        const op = await this.operations.lock(id);
        // Another worker took it over (our lease ended) or it ended meanwhile: not ours to run.
        if (!op || !op.isHeldBy(this.workerId)) return 'skipped';
        if (op.attempts > MAX_ATTEMPTS) {
          throw new DomainError('internal', `The operation was abandoned after ${MAX_ATTEMPTS} interrupted attempts`);
        }
        const executor = this.executors.get(op.type);
        if (!executor) throw new DomainError('internal', `Operations of type ${op.type} cannot be executed`);
        const result = await executor.execute(op);
        op.succeed(result, this.clock.now());
        await this.wallet.capture(op.id);
        await this.operations.save(op);
        return 'succeeded';
      });
    } catch (err) {
      failure = this.toOperationError(id, err);
    }
    // The work's transaction rolled back: the resource is untouched. Fail it and give the hold back.
    return this.uow.run(async () => {
      const op = await this.operations.lock(id);
      if (!op || !op.isHeldBy(this.workerId)) return 'skipped';
      op.fail(failure, this.clock.now());
      await this.wallet.release(op.id);
      await this.operations.save(op);
      return 'failed';
    });
  }

  private toOperationError(id: string, err: unknown): OperationError {
    if (err instanceof DomainError) return { code: err.code, message: err.message };
    this.logger.error({ msg: 'operation failed unexpectedly', operation_id: id, err: describe(err) });
    return { code: 'internal', message: 'The operation failed because of an internal error; the reserved credit was released' };
  }
}

function describe(err: unknown): { name: string; message: string } | string {
  return err instanceof Error ? { name: err.name, message: err.message } : String(err);
}
