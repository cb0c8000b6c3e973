import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { Client } from 'pg';
import { Settings } from '../config/settings';
import { OpenDatabase, serverConnectionOptions } from './data-source';
import { OPEN_DATABASE } from './database-tokens';
import { Db } from './transaction';

/** How often the listening connection proves it is alive (a silent network would otherwise hide lost notifications). */
const LISTENER_PING_MS = 5_000;
const LISTENER_PING_TIMEOUT_MS = 2_000;

type Listener = (payload: string) => void;

/**
 * Wake-ups between server processes on the database in use, shared by every module that needs
 * them (the operations engine, the webhook delivery workers).
 *
 * PostgreSQL server: `pg_notify`, received on ONE dedicated connection per process that LISTENs
 * to every channel somebody subscribed to (opened at the first subscriber, so the CLI never opens
 * one). It proves it is alive every 5 s; when it fails it is opened again after a short, growing
 * delay, LISTENs again, and the `onReconnected` subscribers are called, since a notification may
 * have been lost meanwhile. Embedded engine (one process, one connection, which cannot be given
 * to a LISTEN): the same deliveries inside this process, after the commit.
 *
 * Through a pooler in transaction mode (DATABASE_POOL_MODE=transaction) a LISTEN would be lost
 * with its server connection: the listening connection goes to DATABASE_DIRECT_URL, past the
 * pooler. Without one this process listens to nothing (`listens` is false): it still sends its
 * notifications (a process with a direct connection receives them) and delivers them to its own
 * subscribers after the commit, and the others find the work by polling (the workers at
 * WORKER_INTERVAL_MS, the long-polls at the same interval).
 */
@Injectable()
export class DatabaseNotifications implements OnApplicationShutdown {
  private readonly logger = new Logger('DatabaseNotifications');
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly reconnected = new Set<() => void>();
  /** Per channel: the after-commit pg_notify on its way, and whether commits since it began need another. */
  private readonly notices = new Map<string, { notice: Promise<void>; again: boolean }>();
  private listener: Client | undefined;
  private connecting: Promise<void> | undefined;
  private ping: NodeJS.Timeout | undefined;
  private retry: NodeJS.Timeout | undefined;
  private reconnectDelayMs = 100;
  private closed = false;

  constructor(
    private readonly db: Db,
    @Inject(OPEN_DATABASE) private readonly database: OpenDatabase,
    private readonly settings: Settings,
  ) {}

  /** Whether other processes can be reached (a PostgreSQL server); the embedded engine serves one process. */
  get crossProcess(): boolean {
    return this.database.engine === 'postgresql';
  }

  /** Whether this process receives the other processes' notifications (a LISTEN connection); else they are polled for. */
  get listens(): boolean {
    return this.listenUrl !== undefined;
  }

  /** Where the LISTEN connection goes: DATABASE_DIRECT_URL, else DATABASE_URL unless that is a transaction-mode pooler. */
  private get listenUrl(): string | undefined {
    if (!this.crossProcess) return undefined;
    if (this.settings.databaseDirectUrl) return this.settings.databaseDirectUrl;
    return this.settings.dbPoolMode === 'transaction' ? undefined : this.database.url;
  }

  /**
   * Once the active transaction commits: this process's subscribers of `channel` at once, the
   * other processes' through one `pg_notify` sent after the commit on a pooled connection, not in
   * the transaction (a NOTIFY in a transaction takes PostgreSQL's notification queue lock until
   * the end of its commit, so notifying transactions would commit one at a time). While one such
   * notification is on its way, the next waits and covers every commit meanwhile. A process that
   * dies between the commit and the notification leaves the work to the others' periodic wake-up.
   */
  afterCommit(channel: string, queryName: string, onFailure: string): void {
    this.db.afterCommit(() => {
      this.deliver(channel, '');
      if (this.crossProcess) this.notifyCoalesced(channel, queryName, onFailure);
    });
  }

  /**
   * In the active transaction: `payloads`, each delivered at commit to every process's
   * subscribers of `channel` (this one's included). A payload must stay under 8000 bytes.
   */
  async inTransaction(channel: string, payloads: readonly string[]): Promise<void> {
    if (!this.listens) this.db.afterCommit(() => payloads.forEach((p) => this.deliver(channel, p)));
    if (!this.crossProcess) return;
    for (const payload of payloads) await this.db.exec(`SELECT pg_notify($1, $2)`, [channel, payload]);
  }

  /** Calls `listener` with each payload sent on `channel`. Returns a function that unsubscribes. */
  subscribe(channel: string, listener: Listener): () => void {
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
      const client = this.listener;
      if (client) void client.query(`LISTEN ${channel}`).catch((err: unknown) => this.lost(client, err));
    }
    set.add(listener);
    this.listen();
    return () => set.delete(listener);
  }

  /** Calls `listener` each time the listening connection is open again (notifications may have been lost meanwhile). */
  onReconnected(listener: () => void): () => void {
    this.reconnected.add(listener);
    return () => this.reconnected.delete(listener);
  }

  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.notices.values()].map((n) => n.notice));
    clearInterval(this.ping);
    clearTimeout(this.retry);
    const listener = this.listener;
    this.listener = undefined;
    await listener?.end().catch(() => undefined);
  }

  private deliver(channel: string, payload: string): void {
    for (const listener of this.listeners.get(channel) ?? []) listener(payload);
  }

  private notifyCoalesced(channel: string, queryName: string, onFailure: string): void {
    const pending = this.notices.get(channel);
    if (pending) {
      pending.again = true;
      return;
    }
    const entry = { again: false, notice: Promise.resolve() };
    this.notices.set(channel, entry);
    entry.notice = this.db
      .exec(`SELECT pg_notify($1, '')`, [channel], queryName)
      .then(
        () => undefined,
        (err: unknown) => this.logger.warn({ msg: onFailure, channel, err: err instanceof Error ? err.message : String(err) }),
      )
      .finally(() => {
        this.notices.delete(channel);
        if (entry.again && !this.closed) this.notifyCoalesced(channel, queryName, onFailure);
      });
  }

  /** Opens the LISTEN connection once (PostgreSQL server only). */
  private listen(): void {
    if (!this.listens || this.closed || this.listener || this.connecting || this.retry) return;
    this.connecting = this.connect().finally(() => (this.connecting = undefined));
  }

  private async connect(): Promise<void> {
    const client = new Client({ connectionString: this.listenUrl, ...serverConnectionOptions(this.settings, 'cloud-disk-service-listener') });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, new Error('connection ended')));
    client.on('notification', (msg) => this.deliver(msg.channel, msg.payload ?? ''));
    try {
      await client.connect();
      for (const channel of this.listeners.keys()) await client.query(`LISTEN ${channel}`);
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
    // A channel subscribed to while connecting: LISTEN to it too.
    for (const channel of this.listeners.keys()) await client.query(`LISTEN ${channel}`).catch((err: unknown) => this.lost(client, err));
    // Notifications sent while we were not listening are lost: whoever waits looks again.
    for (const listener of this.reconnected) listener();
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
    if (wasListening) this.logger.warn({ msg: 'lost the connection that listens for notifications; reconnecting', err: err instanceof Error ? err.message : String(err) });
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.listen();
    }, this.reconnectDelayMs);
    this.retry.unref();
    this.reconnectDelayMs = Math.min(this.reconnectDelayMs * 2, 2_000);
  }
}
