import { Injectable } from '@nestjs/common';
import { ShutdownNotice } from '../../../shared/lifecycle/shutdown-notice';
import { notFound } from '../../../shared/kernel/errors/domain-error';
import { decodeCursor, encodeCursor, parseLimit } from '../../../shared/kernel/pagination/cursor';
import { Principal } from '../../auth/domain/principal';
import { Operation, OperationStatus } from '../domain/operation';
import { OperationSignals } from './operation-signals.port';
import { OperationRepository } from './operations.port';

/** The caller's view of operations: one by id, or a page of them, always within its organization. */
@Injectable()
export class OperationQueries {
  constructor(
    private readonly operations: OperationRepository,
    private readonly signals: OperationSignals,
    private readonly shutdown: ShutdownNotice,
  ) {}

  async get(principal: Principal, id: string): Promise<Operation> {
    const op = await this.operations.findInOrg(principal.orgId, id);
    if (!op) throw notFound(`Operation ${id} not found`);
    return op;
  }

  /**
   * Long-poll (AIP-151 WaitOperation): the operation as soon as it has ended, or as it is when
   * `waitMs` has passed, the caller went away (`abort`) or the server started shutting down.
   * Woken by the operation's end notification (or, in a process that listens to nothing, every
   * WORKER_INTERVAL_MS: OperationSignals.waitForEnd): each wake-up reads it once.
   * The wait is registered before each read, so an end committed between the two is not missed.
   */
  async wait(principal: Principal, id: string, waitMs: number, abort?: AbortSignal): Promise<Operation> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const stop = new AbortController();
      const onAbort = (): void => stop.abort();
      abort?.addEventListener('abort', onAbort);
      const woken = this.signals.waitForEnd(id, Math.max(0, deadline - Date.now()), stop.signal);
      try {
        const op = await this.get(principal, id);
        if (op.isFinished() || Date.now() >= deadline || abort?.aborted || this.shutdown.shuttingDown) return op;
        await woken;
        if (Date.now() >= deadline || abort?.aborted || this.shutdown.shuttingDown) return await this.get(principal, id);
      } finally {
        stop.abort();
        abort?.removeEventListener('abort', onAbort);
      }
    }
  }

  /** Newest first. `limit` (1–100, default 20) and `cursor` as sent; 400 naming the field when invalid. */
  async list(
    principal: Principal,
    input: { limit?: string; cursor?: string; volumeId?: string; vmId?: string; deploymentId?: string; status?: OperationStatus },
  ): Promise<{ operations: Operation[]; nextCursor: string | null }> {
    const limit = parseLimit(input.limit);
    const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor);
    const page = await this.operations.list(principal.orgId, { limit, after, volumeId: input.volumeId, vmId: input.vmId, deploymentId: input.deploymentId, status: input.status });
    return { operations: page.items, nextCursor: page.next && encodeCursor(page.next) };
  }
}
