import { Injectable } from '@nestjs/common';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Status label of a request whose client went away before the answer was sent (nginx's 499). */
export const CLIENT_CLOSED_STATUS = '499';

/**
 * The application's Prometheus metrics, in a Registry of its own (not prom-client's global
 * one), so several applications in one process (tests) keep separate counts.
 * Other modules add their gauges to `registry`.
 */
@Injectable()
export class Metrics {
  readonly registry = new Registry();

  private readonly requests = new Counter({
    name: 'cds_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });

  private readonly latency = new Histogram({
    name: 'cds_http_request_duration_seconds',
    help: 'Time from request received to response sent, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  private readonly rateLimited = new Counter({
    name: 'cds_rate_limit_rejections_total',
    help: 'Requests refused with 429 rate_limited, by route pattern',
    labelNames: ['route'] as const,
    registers: [this.registry],
  });

  private readonly topUpsEnded = new Counter({
    name: 'cds_top_ups_ended_total',
    help: 'Top-ups that left pending (or were credited late), by currency and the status reached',
    labelNames: ['currency', 'status'] as const,
    registers: [this.registry],
  });

  private readonly paymentEvents = new Counter({
    name: 'cds_payment_events_total',
    help: 'Inbound payment provider events, by provider and outcome (applied, no_change, ignored, unmatched, duplicate, bad_signature, bad_body)',
    labelNames: ['provider', 'outcome'] as const,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  /** The request counter and histogram of each label set, looked up once (labels are few: method, route pattern, status). */
  private readonly requestSeries = new Map<string, { count: { inc(): void }; latency: { observe(seconds: number): void } }>();

  observeRequest(method: string, route: string, status: string, seconds: number): void {
    const key = `${method} ${status} ${route}`;
    let series = this.requestSeries.get(key);
    if (!series) {
      const labels = { method, route, status };
      series = { count: this.requests.labels(labels), latency: this.latency.labels(labels) };
      this.requestSeries.set(key, series);
    }
    series.count.inc();
    series.latency.observe(seconds);
  }

  rateLimitRejected(route: string): void {
    this.rateLimited.inc({ route });
  }

  topUpEnded(currency: string, status: string): void {
    this.topUpsEnded.inc({ currency, status });
  }

  paymentEvent(provider: string, outcome: string): void {
    this.paymentEvents.inc({ provider, outcome });
  }
}
