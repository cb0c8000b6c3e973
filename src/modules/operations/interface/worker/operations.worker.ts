import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { Settings } from '../../../../shared/config/settings';
import { ShutdownNotice } from '../../../../shared/lifecycle/shutdown-notice';
import { AdvanceOperations } from '../../application/advance-operations.use-case';
import { OperationSignals } from '../../application/operation-signals.port';

export const WORKER_INTERVAL_NAME = 'operations-worker';
/** Operations a lane claims at first. Small, so that several lanes (and processes) share a short queue. */
export const LANE_BATCH_SIZE = 20;
/** A lane whose claim came back full claims twice as many next time, up to this (a deep queue: fewer, larger transactions). */
export const MAX_LANE_BATCH_SIZE = 640;
/**
 * Operations executed in one transaction (AdvanceOperations.executeBatch: a renewal batch is a
 * handful of multi-row statements whatever its size); the stop flag is checked between chunks.
 * As large as the largest claim: the chunks of concurrent lanes lock the same wallet rows and
 * ledger heads (a deep queue spreads over every organization), so fewer, larger chunks wait on
 * each other less. A drain of 5,000 queued renewals over 100 organizations (bench/renewal.ts,
 * PostgreSQL, 2 cores; means of 7 to 16 alternating runs) finished 7,200 operations/s in chunks
 * of 160, 7,714 in chunks of 320 and 8,042 in chunks of 640 (lanes claiming up to the same size):
 * 0.56, 0.61 and 0.61 of the single-row insert ceiling the bench measures in the same runs.
 */
export const EXECUTION_CHUNK = 640;
/**
 * A lane whose claim came back short (the queue drained) and that was woken meanwhile claims
 * again this long after its previous claim, not at once: the renewals accepted meanwhile are
 * executed together, in one chunk transaction of a few statements, instead of a claim and a
 * chunk per two or three of them. At most this much latency under a steady stream; none for a
 * lone operation (a lane that was not woken meanwhile ends, and the next wake-up claims at once).
 */
export const CLAIM_INTERVAL_MS = 25;

class Abandoned extends Error {}

/**
 * The in-process worker (unless WORKER_ENABLED=false). It is woken when work is committed
 * (OperationSignals: LISTEN/NOTIFY on PostgreSQL, in-process on the embedded engine) and, as a
 * fallback (lease takeovers, lost notifications), every WORKER_INTERVAL_MS.
 *
 * Up to WORKER_CONCURRENCY lanes run at once, each on its own connection of the worker's pool:
 * a lane claims a small batch, executes it in chunks (the commit-only steps of a chunk in one
 * transaction, set-based, see AdvanceOperations.executeBatch) and claims again while there is
 * work; a lane that claimed a full batch starts another (so a backlog gets every lane, a lone
 * operation one) and claims twice as many next time (up to MAX_LANE_BATCH_SIZE), back to
 * LANE_BATCH_SIZE once a claim comes back short. A watchdog abandons a claim or an operation still unanswered after
 * the lease (the network to the database went silent): the lane moves on and the operation is
 * taken over when its lease ends (its transaction, if it ever reaches the server, finds it no
 * longer held or is ended by the server's timeouts). On shutdown the lanes stop between two
 * operations and hand back what they claimed and did not start.
 */
@Injectable()
export class OperationsWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('OperationsWorker');
  private readonly lanes = new Set<Promise<void>>();
  private stopped = false;
  /** Set by every wake-up; a lane that found nothing stops only when no wake-up came meanwhile. */
  private woken = false;
  private unsubscribe: (() => void) | undefined;
  private handedBack = 0;

  constructor(
    private readonly settings: Settings,
    private readonly scheduler: SchedulerRegistry,
    private readonly advance: AdvanceOperations,
    private readonly signals: OperationSignals,
    private readonly shutdown: ShutdownNotice,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.settings.workerEnabled) return;
    this.unsubscribe = this.signals.onWork(() => this.wake());
    this.shutdown.onBegin(() => this.stop());
    this.scheduler.addInterval(WORKER_INTERVAL_NAME, setInterval(() => this.wake(), this.settings.workerIntervalMs));
    this.wake();
  }

  /** Lanes at work now (for tests and metrics). */
  get activeLanes(): number {
    return this.lanes.size;
  }

  /** Work may be claimable: make sure a lane is looking. */
  wake(): void {
    this.woken = true;
    if (this.lanes.size === 0) this.startLane();
  }

  /** Drains what is claimable now; resolves when every lane is idle. */
  async tick(): Promise<void> {
    this.wake();
    while (this.lanes.size > 0) await Promise.all([...this.lanes]);
  }

  private startLane(): void {
    if (this.stopped || this.lanes.size >= this.settings.workerConcurrency) return;
    const lane: Promise<void> = this.runLane()
      .catch((err: unknown) => {
        this.logger.error({ msg: 'worker lane failed', err: err instanceof Error ? err.message : String(err) });
      })
      .finally(() => this.lanes.delete(lane));
    this.lanes.add(lane);
  }

  private async runLane(): Promise<void> {
    let size = LANE_BATCH_SIZE;
    while (!this.stopped) {
      this.woken = false;
      const claimedAt = Date.now();
      let ids: string[];
      try {
        ids = await this.watch('claim', () => this.advance.claim(size));
      } catch (err) {
        if (err instanceof Abandoned) return; // the next wake-up starts another lane
        throw err;
      }
      const full = ids.length === size;
      if (full) this.startLane();
      size = full ? Math.min(size * 2, MAX_LANE_BATCH_SIZE) : LANE_BATCH_SIZE;
      for (let i = 0; i < ids.length; i += EXECUTION_CHUNK) {
        if (this.stopped) {
          await this.handBack(ids.slice(i));
          return;
        }
        const chunk = ids.slice(i, i + EXECUTION_CHUNK);
        try {
          await this.watch(`operations ${chunk[0]}…`, () => this.advance.executeBatch(chunk));
        } catch (err) {
          if (!(err instanceof Abandoned)) throw err;
        }
      }
      if (full) continue;
      // The claim took what there was: done, unless work came meanwhile; then a batch of it.
      if (!this.woken) return;
      const pause = claimedAt + CLAIM_INTERVAL_MS - Date.now();
      if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }

  /** Runs `work`, giving up on it (not cancelling it) once it has taken longer than the lease. */
  private watch<T>(what: string, work: () => Promise<T>): Promise<T> {
    const limitMs = this.settings.workerLeaseMs;
    let timer: NodeJS.Timeout | undefined;
    const watchdog = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.logger.warn({ msg: 'worker abandoned a step that outlived its lease; the operation will be taken over', what, limit_ms: limitMs });
        reject(new Abandoned(what));
      }, limitMs);
    });
    const running = work();
    running.catch(() => undefined); // an abandoned step may still fail later
    return Promise.race([running, watchdog]).finally(() => clearTimeout(timer));
  }

  private async handBack(ids: string[]): Promise<void> {
    try {
      this.handedBack += await this.advance.handBack(ids);
    } catch (err) {
      this.logger.warn({ msg: 'could not hand back claimed operations; their leases will run out', count: ids.length, err: err instanceof Error ? err.message : String(err) });
    }
  }

  private stop(): void {
    this.stopped = true;
    if (this.scheduler.doesExist('interval', WORKER_INTERVAL_NAME)) this.scheduler.deleteInterval(WORKER_INTERVAL_NAME);
    this.unsubscribe?.();
  }

  /** Stops claiming; each lane finishes its current operation and hands back the rest of its batch. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stop();
    while (this.lanes.size > 0) await Promise.all([...this.lanes]);
    if (this.settings.workerEnabled) {
      this.logger.log({ msg: 'worker stopped; claimed operations it had not started were handed back', handed_back: this.handedBack });
    }
  }
}
