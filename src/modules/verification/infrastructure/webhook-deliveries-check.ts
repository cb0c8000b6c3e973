import { Settings } from '../../../shared/config/settings';
import { Db } from '../../../shared/database/transaction';
import { Finding, InvariantCheck } from '../application/invariant-checks.port';

/**
 * funding.md "Verify": no webhook delivery is still pending past what its schedule allows:
 * created_at + 1.1 × the sum of WEBHOOK_RETRY_SCHEDULE_S (its jitter) + one timeout per attempt
 * + WORKER_LEASE_MS + 60 s (30.4 hours by default). A delivery past it was lost by the workers
 * (never claimed again, or its outcome never recorded).
 */
export class WebhookDeliveriesOnScheduleCheck implements InvariantCheck {
  readonly name = 'webhooks.deliveries_on_schedule';
  readonly description = 'No webhook delivery is pending past created_at + 1.1 × its retry schedule + the worker lease + 60 s';

  constructor(
    private readonly db: Db,
    private readonly settings: Pick<Settings, 'webhookRetryScheduleS' | 'webhookTimeoutMs' | 'workerLeaseMs'>,
  ) {}

  /** How long a delivery may stay pending, in milliseconds. */
  allowedMs(): number {
    const schedule = this.settings.webhookRetryScheduleS;
    const sum = schedule.reduce((a, b) => a + b, 0) * 1000;
    return Math.ceil(1.1 * sum) + schedule.length * this.settings.webhookTimeoutMs + this.settings.workerLeaseMs + 60_000;
  }

  async findViolations(): Promise<Finding[]> {
    const rows = await this.db.query<{ id: string; endpoint_id: string; org_id: string; attempts: number; created_at: string; next_attempt_at: string | null }>(
      `SELECT d.id, d.endpoint_id, e.org_id, d.attempts, to_char(d.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
              to_char(d.next_attempt_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS next_attempt_at
         FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE d.status = 'pending' AND d.created_at < now() - make_interval(secs => $1::double precision / 1000)
        ORDER BY d.created_at, d.id`,
      [this.allowedMs()],
    );
    return rows.map((r) => ({
      subject: r.id,
      message: `delivery created at ${r.created_at} is still pending after ${r.attempts} attempt(s), past its schedule`,
      details: { org_id: r.org_id, endpoint_id: r.endpoint_id, attempts: r.attempts, next_attempt_at: r.next_attempt_at },
    }));
  }
}
