import { EventEmitter } from 'node:events';
import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { Client } from 'pg';
import { Settings } from '../../../shared/config/settings';
import { OpenDatabase, serverConnectionOptions } from '../../../shared/database/data-source';
import { OPEN_DATABASE } from '../../../shared/database/database.module';
import { Db } from '../../../shared/database/transaction';
import { ShutdownNotice } from '../../../shared/lifecycle/shutdown-notice';
import { OperationSignals } from '../application/operation-signals.port';

export const WORK_CHANNEL = 'cds_operations_work';
export const ENDED_CHANNEL = 'cds_operations_ended';
/** A NOTIFY payload must stay under 8000 bytes: ids are sent in groups. */
const IDS_PER_NOTIFICATION = 200;
/** How often the listening connection proves it is alive (a silent network would otherwise hide lost notifications). */
const LISTENER_PING_MS = 5_000;
const LISTENER_PING_TIMEOUT_MS = 2_000;

/**
 * OperationSignals on the database in use. PostgreSQL server: `pg_notify` in the writing
 * transaction (delivered at commit, to every process), received on one dedicated connection
 * per process that LISTENs (opened at the first subscriber, so the CLI never opens one); when
 * that connection fails it is opened again and LISTENs again, and everybody is woken, since a
 * notification may have been lost meanwhile. Embedded engine (one process, one connection,
 * which cannot be given to a LISTEN): the same events inside this process, after the commit.
 */
@Injectable()
export class DatabaseOperationSignals extends OperationSignals implements OnApplicationShutdown {
  private readonly logger = new Logger('OperationSignals');
  private readonly events = new EventEmitter();
  private listener: Client | undefined;
  private connecting: Promise<void> | undefined;
  private ping: NodeJS.Timeout | undefined;
  private retry: NodeJS.Timeout | undefined;
  private reconnectDelayMs = 100;
  private closed = false;
  /** The pg_notify of new work on its way, and whether commits since it began need another. */
  private workNotice: Promise<void> | undefined;
  private workNoticeAgain = false;

  constructor(
    private readonly db: Db,
    @Inject(OPEN_DATABASE) private readonly database: OpenDatabase,
    private readonly settings: Settings,
    private readonly shutdown: ShutdownNotice,
  ) {
    super();
    this.events.setMaxListeners(0);
    // Long-polls answer at once when the server starts shutting down.
    this.shutdown.onBegin(() => this.events.emit('wake-all'));
  }

  private get notifies(): boolean {
    return this.database.engine === 'postgresql';
  }

  /**
   * Once the transaction commits: this process's worker at once (an event), the other processes'
   * through one `pg_notify` sent after the commit on a pooled connection, not in the transaction
   * (a NOTIFY in a transaction takes PostgreSQL's notification queue lock until the end of its
   * commit, so notifying transactions commit one at a time). While one such notification is on
   * its way, the next waits and covers every commit meanwhile. A process that dies between the
   * commit and the notification leaves the work to the other workers' WORKER_INTERVAL_MS wake-up.
   */
  async announceWork(): Promise<void> {
    this.db.afterCommit(() => {
      this.events.emit('work');
      if (this.notifies) this.notifyWork();
    });
  }

  async announceEnded(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    if (!this.notifies) {
      this.db.afterCommit(() => this.emitEnded(ids));
      return;
    }
    for (let i = 0; i < ids.length; i += IDS_PER_NOTIFICATION) {
      await this.db.exec(`SELECT pg_notify($1, $2)`, [ENDED_CHANNEL, ids.slice(i, i + IDS_PER_NOTIFICATION).join(',')]);
    }
  }

  onWork(listener: () => void): () => void {
    this.listen();
    this.events.on('work', listener);
    return () => this.events.off('work', listener);
  }

  waitForEnd(id: string, timeoutMs: number, abort?: AbortSignal): Promise<void> {
    this.listen();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.events.off(`ended:${id}`, done);
        this.events.off('wake-all', done);
        abort?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.events.on(`ended:${id}`, done);
      this.events.on('wake-all', done);
      abort?.addEventListener('abort', done);
      if (this.shutdown.shuttingDown || abort?.aborted) done();
    });
  }

  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    await this.workNotice;
    this.events.emit('wake-all');
    clearInterval(this.ping);
    clearTimeout(this.retry);
    const listener = this.listener;
    this.listener = undefined;
    await listener?.end().catch(() => undefined);
  }

  /** One pg_notify on WORK_CHANNEL at a time; commits meanwhile are covered by one more. */
  private notifyWork(): void {
    if (this.workNotice) {
      this.workNoticeAgain = true;
      return;
    }
    this.workNotice = this.db
      .exec(`SELECT pg_notify($1, '')`, [WORK_CHANNEL], 'operations_notify_work')
      .then(
        () => undefined,
        (err: unknown) => this.logger.warn({ msg: 'could not notify the other processes of new operations; their workers find them on their next wake-up', err: err instanceof Error ? err.message : String(err) }),
      )
      .finally(() => {
        this.workNotice = undefined;
        if (!this.workNoticeAgain || this.closed) return;
        this.workNoticeAgain = false;
        this.notifyWork();
      });
  }

  private emitEnded(ids: readonly string[]): void {
    for (const id of ids) if (id) this.events.emit(`ended:${id}`);
  }

  /** Opens the LISTEN connection once (PostgreSQL server only). */
  private listen(): void {
    if (!this.notifies || this.closed || this.listener || this.connecting || this.retry) return;
    this.connecting = this.connect().finally(() => (this.connecting = undefined));
  }

  private async connect(): Promise<void> {
    const client = new Client({ connectionString: this.database.url, ...serverConnectionOptions(this.settings, 'cloud-disk-service-listener') });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, new Error('connection ended')));
    client.on('notification', (msg) => {
      if (msg.channel === WORK_CHANNEL) this.events.emit('work');
      else if (msg.channel === ENDED_CHANNEL) this.emitEnded((msg.payload ?? '').split(','));
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${WORK_CHANNEL}`);
      await client.query(`LISTEN ${ENDED_CHANNEL}`);
    } catch (err) {
      this.lost(client, err);
      return;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.listener = client;
    this.reconnectDelayMs = 100;
    this.ping = setInterval(() => void this.checkAlive(client), LISTENER_PING_MS);
    this.ping.unref();
    // Notifications sent while we were not listening are lost: whoever waits looks again.
    this.events.emit('work');
    this.events.emit('wake-all');
  }

  private async checkAlive(client: Client): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer in ${LISTENER_PING_TIMEOUT_MS} ms`)), LISTENER_PING_TIMEOUT_MS);
    });
    try {
      await Promise.race([client.query('SELECT 1'), timeout]);
    } catch (err) {
      this.lost(client, err);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The listening connection failed: drop it and open another after a short, growing delay. */
  private lost(client: Client, err: unknown): void {
    if (this.listener && this.listener !== client) return;
    const wasListening = this.listener === client;
    this.listener = undefined;
    clearInterval(this.ping);
    (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
    if (this.closed || this.retry) return;
    if (wasListening) this.logger.warn({ msg: 'lost the connection that listens for operation notifications; reconnecting', err: err instanceof Error ? err.message : String(err) });
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.listen();
    }, this.reconnectDelayMs);
    this.retry.unref();
    this.reconnectDelayMs = Math.min(this.reconnectDelayMs * 2, 2_000);
  }
}
