import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { Metrics } from '../../../../shared/observability/metrics';
import { Settings } from '../../../../shared/config/settings';
import { Clock } from '../../../../shared/kernel/clock/clock';
import { ServiceSnapshot, ServiceStats } from '../../application/service-stats.port';

/**
 * Gauges read from the database: unfinished operations by type and status, worker lag (age of the
 * oldest pending operation), wallet holds and reserved balances, pending top-ups, pending webhook
 * deliveries and the outbox lag. All read one snapshot (one statement), shared by
 * the gauges of a scrape and reused by the scrapes of the next METRICS_GAUGE_CACHE_MS, so scrapers
 * in a hurry (or several of them) cost the database one statement per period at most. A failed
 * read leaves the gauges empty for that scrape (and logs a warning) rather than failing the whole
 * scrape, and is not reused.
 */
@Injectable()
export class ServiceGauges implements OnModuleInit {
  private readonly logger = new Logger('ServiceGauges');

  constructor(
    private readonly metrics: Metrics,
    private readonly stats: ServiceStats,
    private readonly clock: Clock,
    private readonly settings: Settings,
  ) {}

  private cached: { at: number; snapshot: Promise<ServiceSnapshot> } | undefined;
  /** Whether `cached` is still being read: the gauges of one scrape share it even with no cache period. */
  private inFlight = false;

  /** The snapshot read less than metricsGaugeCacheMs ago (or being read), otherwise a new one. Monotonic time. */
  private snapshot(): Promise<ServiceSnapshot> {
    const now = performance.now();
    if (this.cached && now - this.cached.at < Math.max(this.settings.metricsGaugeCacheMs, 0)) return this.cached.snapshot;
    if (this.cached && this.inFlight) return this.cached.snapshot;
    const snapshot = this.stats.snapshot(this.clock.now());
    const entry = { at: now, snapshot };
    this.cached = entry;
    this.inFlight = true;
    snapshot.then(
      () => {
        if (this.cached === entry) this.inFlight = false;
      },
      () => {
        if (this.cached === entry) {
          this.cached = undefined;
          this.inFlight = false;
        }
      },
    );
    return snapshot;
  }

  onModuleInit(): void {
    const { clock } = this;
    const read = (): Promise<ServiceSnapshot> => this.snapshot();
    const registers = [this.metrics.registry];
    const failed = (gauge: string, err: unknown): void =>
      this.logger.warn({ msg: 'metrics: reading the database failed', gauge, err: err instanceof Error ? err.message : String(err) });

    new Gauge({
      name: 'cds_operations',
      help: 'Unfinished operations (pending, running) in the database, by type and status',
      labelNames: ['type', 'status'] as const,
      registers,
      async collect() {
        this.reset();
        try {
          for (const r of (await read()).operations) this.set({ type: r.type, status: r.status }, r.count);
        } catch (err) {
          failed('cds_operations', err);
        }
      },
    });

    new Gauge({
      name: 'cds_worker_lag_seconds',
      help: 'Age in seconds of the oldest pending operation (0 when none is pending)',
      registers,
      async collect() {
        this.reset();
        try {
          const oldest = (await read()).oldestPending;
          this.set(oldest ? Math.max(0, (clock.now().getTime() - oldest.getTime()) / 1000) : 0);
        } catch (err) {
          failed('cds_worker_lag_seconds', err);
        }
      },
    });

    new Gauge({
      name: 'cds_wallet_holds_outstanding',
      help: 'Wallet holds of unfinished operations not yet captured or released, by currency',
      labelNames: ['currency'] as const,
      registers,
      async collect() {
        this.reset();
        try {
          for (const h of (await read()).holds) this.set({ currency: h.currency }, h.outstanding);
        } catch (err) {
          failed('cds_wallet_holds_outstanding', err);
        }
      },
    });

    new Gauge({
      name: 'cds_wallet_reserved_minor_units',
      help: 'Sum of the reserved wallet balances, by currency, in minor units (USD 0.00001, IDR 1)',
      labelNames: ['currency'] as const,
      registers,
      async collect() {
        this.reset();
        try {
          // Exact as long as the sum stays below 2^53 minor units (90 billion USD).
          for (const h of (await read()).holds) this.set({ currency: h.currency }, Number(h.reservedMinor));
        } catch (err) {
          failed('cds_wallet_reserved_minor_units', err);
        }
      },
    });

    new Gauge({
      name: 'cds_top_ups_pending',
      help: 'Pending wallet top-ups (checkout open, not yet paid, canceled or expired), by currency',
      labelNames: ['currency'] as const,
      registers,
      async collect() {
        this.reset();
        try {
          for (const t of (await read()).topUpsPending) this.set({ currency: t.currency }, t.count);
        } catch (err) {
          failed('cds_top_ups_pending', err);
        }
      },
    });

    new Gauge({
      name: 'cds_webhook_deliveries_pending',
      help: 'Webhook deliveries pending (due or waiting for a retry)',
      registers,
      async collect() {
        this.reset();
        try {
          this.set((await read()).webhooks.pending);
        } catch (err) {
          failed('cds_webhook_deliveries_pending', err);
        }
      },
    });

    new Gauge({
      name: 'cds_webhook_outbox_lag_seconds',
      help: 'Now minus the earliest due next_attempt_at of a pending delivery; 0 if none is due',
      registers,
      async collect() {
        this.reset();
        try {
          const due = (await read()).webhooks.earliestDue;
          this.set(due ? Math.max(0, (clock.now().getTime() - due.getTime()) / 1000) : 0);
        } catch (err) {
          failed('cds_webhook_outbox_lag_seconds', err);
        }
      },
    });
  }
}
