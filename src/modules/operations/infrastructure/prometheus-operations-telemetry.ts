import { Injectable, Optional } from '@nestjs/common';
import { Histogram } from 'prom-client';
import { Metrics } from '../../../shared/observability/metrics';
import { OperationsTelemetry } from '../application/operations-telemetry.port';
import { OperationType } from '../domain/operation';

/**
 * The worker's Prometheus metrics: accept-to-finish latency by operation type and outcome, and
 * the size of each claim. Without a Metrics registry (the CLI) nothing is recorded.
 */
@Injectable()
export class PrometheusOperationsTelemetry extends OperationsTelemetry {
  private readonly latency?: Histogram<'type' | 'status'>;
  private readonly batches?: Histogram;

  constructor(@Optional() metrics?: Metrics) {
    super();
    if (!metrics) return;
    const registers = [metrics.registry];
    this.latency = new Histogram({
      name: 'cds_operation_accept_to_finish_seconds',
      help: 'Time from an operation accepted (created_at) to ended (finished_at), by type and final status',
      labelNames: ['type', 'status'] as const,
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers,
    });
    this.batches = new Histogram({
      name: 'cds_worker_claim_batch_size',
      help: 'Operations taken by each claim of the worker (0 when it found none)',
      buckets: [0, 1, 2, 5, 10, 20, 50],
      registers,
    });
  }

  claimed(size: number): void {
    this.batches?.observe(size);
  }

  ended(type: OperationType, status: 'succeeded' | 'failed', seconds: number): void {
    this.latency?.observe({ type, status }, seconds);
  }
}
