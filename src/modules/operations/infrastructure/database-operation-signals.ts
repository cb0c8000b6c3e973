import { EventEmitter } from 'node:events';
import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { Settings } from '../../../shared/config/settings';
import { DatabaseNotifications } from '../../../shared/database/database-notifications';
import { ShutdownNotice } from '../../../shared/lifecycle/shutdown-notice';
import { OperationSignals } from '../application/operation-signals.port';

export const WORK_CHANNEL = 'cds_operations_work';
export const ENDED_CHANNEL = 'cds_operations_ended';
/** A NOTIFY payload must stay under 8000 bytes: ids are sent in groups. */
const IDS_PER_NOTIFICATION = 200;

/**
 * OperationSignals on the shared DatabaseNotifications (one LISTEN connection per process on a
 * PostgreSQL server, events in this process on the embedded engine):
 * - new work: once the transaction commits, this process's worker at once and the other
 *   processes' through one coalesced notification sent after the commit;
 * - ended operations: their ids in notifications sent in the ending transaction (delivered at
 *   commit, to every process), which wake the long-polls waiting for them;
 * - when the listening connection was lost and reopened, every worker and every waiter is woken
 *   (a notification may have been missed); long-polls also answer at once when the server starts
 *   shutting down;
 * - when this process listens to nothing (a transaction-mode pooler without DATABASE_DIRECT_URL),
 *   a long-poll wakes every WORKER_INTERVAL_MS to read its operation again.
 */
@Injectable()
export class DatabaseOperationSignals extends OperationSignals implements OnApplicationShutdown {
  private readonly events = new EventEmitter();
  private listeningForEnds = false;

  constructor(
    private readonly notifications: DatabaseNotifications,
    private readonly shutdown: ShutdownNotice,
    private readonly settings: Settings,
  ) {
    super();
    this.events.setMaxListeners(0);
    this.shutdown.onBegin(() => this.events.emit('wake-all'));
    this.notifications.onReconnected(() => this.events.emit('wake-all'));
  }

  async announceWork(): Promise<void> {
    this.notifications.afterCommit(WORK_CHANNEL, 'operations_notify_work', 'could not notify the other processes of new operations; their workers find them on their next wake-up');
  }

  async announceEnded(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    const groups: string[] = [];
    for (let i = 0; i < ids.length; i += IDS_PER_NOTIFICATION) groups.push(ids.slice(i, i + IDS_PER_NOTIFICATION).join(','));
    await this.notifications.inTransaction(ENDED_CHANNEL, groups);
  }

  onWork(listener: () => void): () => void {
    const unsubscribe = this.notifications.subscribe(WORK_CHANNEL, () => listener());
    const unsubscribeReconnected = this.notifications.onReconnected(listener);
    return () => {
      unsubscribe();
      unsubscribeReconnected();
    };
  }

  waitForEnd(id: string, timeoutMs: number, abort?: AbortSignal): Promise<void> {
    if (!this.listeningForEnds) {
      this.listeningForEnds = true;
      this.notifications.subscribe(ENDED_CHANNEL, (payload) => {
        for (const ended of payload.split(',')) if (ended) this.events.emit(`ended:${ended}`);
      });
    }
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.events.off(`ended:${id}`, done);
        this.events.off('wake-all', done);
        abort?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, this.notifications.listens ? timeoutMs : Math.min(timeoutMs, this.settings.workerIntervalMs));
      this.events.on(`ended:${id}`, done);
      this.events.on('wake-all', done);
      abort?.addEventListener('abort', done);
      if (this.shutdown.shuttingDown || abort?.aborted) done();
    });
  }

  onApplicationShutdown(): void {
    this.events.emit('wake-all');
  }
}
