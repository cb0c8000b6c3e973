import { EventEmitter } from 'node:events';
import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { Client } from 'pg';
import { Settings } from '../../../shared/config/settings';
import { OpenDatabase, serverConnectionOptions } from '../../../shared/database/data-source';
import { OPEN_DATABASE } from '../../../shared/database/database.module';
import { Db } from '../../../shared/database/transaction';
import { WebhookSignals } from '../application/webhook-signals.port';

export const WEBHOOK_CHANNEL = 'cds_webhooks_work';

/**
 * WebhookSignals as the operations engine's signals work: once the transaction commits, this
 * process's workers at once (an event) and the other processes' through one `pg_notify` sent
 * after the commit on a pooled connection (one at a time; commits meanwhile are covered by one
 * more), received on one LISTEN connection per process opened at the first subscriber and
 * opened again when it fails (then everybody is woken: a notification may have been lost). The
 * workers' periodic wake-up (WORKER_INTERVAL_MS) covers a process that died between its commit
 * and its notification. Embedded engine: the event in this process only.
 */
@Injectable()
export class DatabaseWebhookSignals extends WebhookSignals implements OnApplicationShutdown {
  private readonly logger = new Logger('WebhookSignals');
  private readonly events = new EventEmitter();
  private listener: Client | undefined;
  private connecting: Promise<void> | undefined;
  private retry: NodeJS.Timeout | undefined;
  private closed = false;
  private notice: Promise<void> | undefined;
  private noticeAgain = false;

  constructor(
    private readonly db: Db,
    @Inject(OPEN_DATABASE) private readonly database: OpenDatabase,
    private readonly settings: Settings,
  ) {
    super();
    this.events.setMaxListeners(0);
  }

  private get notifies(): boolean {
    return this.database.engine === 'postgresql';
  }

  announce(): void {
    this.db.afterCommit(() => {
      this.events.emit('work');
      if (this.notifies) this.notify();
    });
  }

  onWork(listener: () => void): () => void {
    this.listen();
    this.events.on('work', listener);
    return () => this.events.off('work', listener);
  }

  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    await this.notice;
    clearTimeout(this.retry);
    const listener = this.listener;
    this.listener = undefined;
    await listener?.end().catch(() => undefined);
  }

  private notify(): void {
    if (this.notice) {
      this.noticeAgain = true;
      return;
    }
    this.notice = this.db
      .exec(`SELECT pg_notify($1, '')`, [WEBHOOK_CHANNEL], 'webhooks_notify_work')
      .then(
        () => undefined,
        (err: unknown) => this.logger.warn({ msg: 'could not notify the other processes of due webhook deliveries; their workers find them on their next wake-up', err: err instanceof Error ? err.message : String(err) }),
      )
      .finally(() => {
        this.notice = undefined;
        if (!this.noticeAgain || this.closed) return;
        this.noticeAgain = false;
        this.notify();
      });
  }

  private listen(): void {
    if (!this.notifies || this.closed || this.listener || this.connecting || this.retry) return;
    this.connecting = this.connect().finally(() => (this.connecting = undefined));
  }

  private async connect(): Promise<void> {
    const client = new Client({ connectionString: this.database.url, ...serverConnectionOptions(this.settings, 'cloud-disk-service-webhooks-listener') });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, new Error('connection ended')));
    client.on('notification', () => this.events.emit('work'));
    try {
      await client.connect();
      await client.query(`LISTEN ${WEBHOOK_CHANNEL}`);
    } catch (err) {
      this.lost(client, err);
      return;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.listener = client;
    this.events.emit('work');
  }

  private lost(client: Client, err: unknown): void {
    if (this.listener && this.listener !== client) return;
    const wasListening = this.listener === client;
    this.listener = undefined;
    (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
    if (this.closed || this.retry) return;
    if (wasListening) this.logger.warn({ msg: 'lost the connection that listens for webhook notifications; reconnecting', err: err instanceof Error ? err.message : String(err) });
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.listen();
      this.events.emit('work');
    }, 500);
    this.retry.unref();
  }
}
