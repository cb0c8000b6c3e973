import { BeforeApplicationShutdown, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { Settings } from '../config/settings';

/**
 * A housekeeping job run every `intervalMs` in processes that run the worker (WORKER_ENABLED),
 * never overlapping itself; shutdown tells a run in flight to stop (`stopping()`) and waits for
 * it. Subclasses say what one run does and return how many rows it removed (logged when not
 * zero). Needs ScheduleModule.forRoot().
 */
export abstract class PeriodicJob implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger: Logger;
  private inFlight: Promise<void> | undefined;
  private stopped = false;

  protected constructor(
    /** The interval's name in the SchedulerRegistry, and the log context. */
    readonly name: string,
    private readonly intervalMs: number,
    private readonly settings: Settings,
    private readonly scheduler: SchedulerRegistry,
  ) {
    this.logger = new Logger(name);
  }

  /** What the count of a run is, in its log line. */
  protected readonly removed: string = 'rows purged';

  /** One run; how many rows it removed. A long run checks `stopping()` between its pieces of work and returns early once it is true. */
  protected abstract runOnce(stopping: () => boolean): Promise<number>;

  onApplicationBootstrap(): void {
    if (!this.settings.workerEnabled) return;
    this.scheduler.addInterval(this.name, setInterval(() => void this.tick(), this.intervalMs));
  }

  /** Runs once now, or joins the run in flight. */
  tick(): Promise<void> {
    this.inFlight ??= this.runOnce(() => this.stopped)
      .then((n) => {
        if (n > 0) this.logger.log({ msg: `${this.name}: ${this.removed}`, count: n });
      })
      .catch((err: unknown) => this.logger.error({ msg: `${this.name} failed`, err: err instanceof Error ? err.message : String(err) }))
      .finally(() => {
        this.inFlight = undefined;
      });
    return this.inFlight;
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.scheduler.doesExist('interval', this.name)) this.scheduler.deleteInterval(this.name);
    await this.inFlight;
  }
}

/** One pass of a sweep: stops early once `stopping()` is true, and says how many things it handled. */
export interface Sweep {
  execute(stopping: () => boolean): Promise<number>;
}

/** A PeriodicJob whose run is one pass of a Sweep (the orphan sweeps), `removed` naming its count in the log line. */
export abstract class SweepJob extends PeriodicJob {
  protected constructor(
    name: string,
    intervalMs: number,
    protected readonly removed: string,
    private readonly sweep: Sweep,
    settings: Settings,
    scheduler: SchedulerRegistry,
  ) {
    super(name, intervalMs, settings, scheduler);
  }

  protected runOnce(stopping: () => boolean): Promise<number> {
    return this.sweep.execute(stopping);
  }
}

/** Calls `step(limit)` (which deletes up to `limit` rows and says how many) until a batch is short; the total. */
export async function purgeInBatches(step: (limit: number) => Promise<number>, batch = 1000, maxBatches = 1000): Promise<number> {
  let total = 0;
  for (let i = 0; i < maxBatches; i++) {
    const n = await step(batch);
    total += n;
    if (n < batch) break;
  }
  return total;
}
