import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { Settings } from '../../../../shared/config/settings';
import { AdvanceOperations } from '../../application/advance-operations.use-case';

export const WORKER_INTERVAL_NAME = 'operations-worker';

/**
 * The in-process worker: every WORKER_INTERVAL_MS it advances operations (unless
 * WORKER_ENABLED=false). A tick that is still running makes the next one a no-op, so the worker
 * never overlaps itself; shutdown waits for the tick in progress before the database closes.
 */
@Injectable()
export class OperationsWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('OperationsWorker');
  private inFlight: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly settings: Settings,
    private readonly scheduler: SchedulerRegistry,
    private readonly advance: AdvanceOperations,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.settings.workerEnabled) return;
    this.scheduler.addInterval(WORKER_INTERVAL_NAME, setInterval(() => void this.tick(), this.settings.workerIntervalMs));
  }

  /** One tick: drains what is claimable now. Skipped while the previous tick runs. */
  tick(): Promise<void> {
    if (this.inFlight || this.stopped) return this.inFlight ?? Promise.resolve();
    this.inFlight = this.advance
      .runUntilIdle(50)
      .then(() => undefined)
      .catch((err: unknown) => {
        this.logger.error({ msg: 'worker tick failed', err: err instanceof Error ? err.message : String(err) });
      })
      .finally(() => {
        this.inFlight = undefined;
      });
    return this.inFlight;
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.scheduler.doesExist('interval', WORKER_INTERVAL_NAME)) this.scheduler.deleteInterval(WORKER_INTERVAL_NAME);
    await this.inFlight;
  }
}
