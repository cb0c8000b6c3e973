import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { Metrics } from '../../../../shared/observability/metrics';
import { TopUpStore } from '../../application/top-ups.port';

/** cds_top_ups_pending{currency}: pending top-ups in the database, read at each scrape (a failed read leaves it empty and logs a warning). */
@Injectable()
export class TopUpGauges implements OnModuleInit {
  private readonly logger = new Logger('TopUpGauges');

  constructor(
    private readonly metrics: Metrics,
    private readonly store: TopUpStore,
  ) {}

  onModuleInit(): void {
    const { store, logger } = this;
    new Gauge({
      name: 'cds_top_ups_pending',
      help: 'Pending wallet top-ups (checkout open, not yet paid, canceled or expired), by currency',
      labelNames: ['currency'] as const,
      registers: [this.metrics.registry],
      async collect() {
        this.reset();
        try {
          const counts = await store.pendingCounts();
          for (const [currency, n] of Object.entries(counts)) this.set({ currency }, n);
        } catch (err) {
          logger.warn({ msg: 'metrics: reading the database failed', gauge: 'cds_top_ups_pending', err: err instanceof Error ? err.message : String(err) });
        }
      },
    });
  }
}
