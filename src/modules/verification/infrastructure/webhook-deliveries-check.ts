import { Settings } from '../../../shared/config/settings';
import { Db } from '../../../shared/database/transaction';
import { MAX_IN_FLIGHT_PER_ENDPOINT } from '../../webhooks/domain/webhook';
import { Finding, InvariantCheck } from '../application/invariant-checks.port';

type CheckSettings = Pick<Settings, 'webhookRetryScheduleS' | 'webhookTimeoutMs' | 'workerLeaseMs' | 'workerIntervalMs' | 'webhookConcurrencyPerOrganization'>;

/**
 * funding.md "Verify": no webhook delivery is off its schedule, in either of two ways.
 * - Still pending past what its whole schedule allows: created_at + 1.1 × the sum of
 *   WEBHOOK_RETRY_SCHEDULE_S (its jitter) + one timeout per attempt + WORKER_LEASE_MS + 60 s
 *   (30.4 hours by default). A delivery past it was lost by the workers (never claimed again,
 *   or its outcome never recorded).
 * - Starved: due (its next attempt's time passed and no lease holds it) for longer than one
 *   attempt may wait for a slot (2 × WEBHOOK_TIMEOUT_MS + WORKER_INTERVAL_MS + 5 s, 25.5 s by
 *   default) while neither its organization holds its share of the slots
 *   (WEBHOOK_CONCURRENCY_PER_ORGANIZATION) nor its endpoint its 4: the slots went to others.
 *   A delivery waiting behind its own organization's or endpoint's deliveries is on schedule.
 */
export class WebhookDeliveriesOnScheduleCheck implements InvariantCheck {
  readonly name = 'webhooks.deliveries_on_schedule';
  readonly description =
    'No webhook delivery is pending past created_at + 1.1 × its retry schedule + the worker lease + 60 s, nor due longer than 2 timeouts + the worker interval + 5 s while its organization and endpoint hold less than their share of the slots';

  constructor(
    private readonly db: Db,
    private readonly settings: CheckSettings,
  ) {}

  /** How long a delivery may stay pending, in milliseconds. */
  allowedMs(): number {
    const schedule = this.settings.webhookRetryScheduleS;
    const sum = schedule.reduce((a, b) => a + b, 0) * 1000;
    return Math.ceil(1.1 * sum) + schedule.length * this.settings.webhookTimeoutMs + this.settings.workerLeaseMs + 60_000;
  }

  /** How long a due delivery may wait for a slot while its organization and endpoint are below their shares, in milliseconds. */
  dueWaitMs(): number {
    return 2 * this.settings.webhookTimeoutMs + this.settings.workerIntervalMs + 5_000;
  }

  async findViolations(): Promise<Finding[]> {
    const rows = await this.db.query<{
      id: string; endpoint_id: string; org_id: string; attempts: number; created_at: string; next_attempt_at: string | null;
      lost: boolean; waited_s: string; org_in_flight: number; endpoint_in_flight: number;
    }>(
      `WITH in_flight AS (
         SELECT d.endpoint_id, e.org_id, count(*)::int AS n
           FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
          WHERE d.status = 'pending' AND d.locked_until >= now()
          GROUP BY d.endpoint_id, e.org_id
       ), late AS (
         SELECT d.id, d.endpoint_id, e.org_id, d.attempts, d.created_at, d.next_attempt_at,
                d.created_at < now() - make_interval(secs => $1::double precision / 1000) AS lost,
                greatest(d.next_attempt_at, coalesce(d.locked_until, d.next_attempt_at)) AS due_since,
                coalesce((SELECT sum(i.n) FROM in_flight i WHERE i.org_id = e.org_id), 0)::int AS org_in_flight,
                coalesce((SELECT i.n FROM in_flight i WHERE i.endpoint_id = d.endpoint_id), 0)::int AS endpoint_in_flight
           FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
          WHERE d.status = 'pending'
            AND (d.created_at < now() - make_interval(secs => $1::double precision / 1000)
                 OR (e.status = 'enabled' AND greatest(d.next_attempt_at, coalesce(d.locked_until, d.next_attempt_at)) < now() - make_interval(secs => $2::double precision / 1000)))
       )
       SELECT id, endpoint_id, org_id, attempts, lost, org_in_flight, endpoint_in_flight,
              to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
              to_char(next_attempt_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS next_attempt_at,
              floor(extract(epoch FROM now() - due_since))::text AS waited_s
         FROM late
        WHERE lost OR (org_in_flight < $3 AND endpoint_in_flight < $4)
        ORDER BY created_at, id`,
      [this.allowedMs(), this.dueWaitMs(), this.settings.webhookConcurrencyPerOrganization, MAX_IN_FLIGHT_PER_ENDPOINT],
    );
    return rows.map((r): Finding =>
      r.lost
        ? {
            subject: r.id,
            message: `delivery created at ${r.created_at} is still pending after ${r.attempts} attempt(s), past its schedule`,
            details: { org_id: r.org_id, endpoint_id: r.endpoint_id, attempts: r.attempts, next_attempt_at: r.next_attempt_at },
          }
        : {
            subject: r.id,
            message:
              `delivery due since ${r.next_attempt_at} has waited ${r.waited_s} s for a slot while its organization held ${r.org_in_flight} ` +
              `of its ${this.settings.webhookConcurrencyPerOrganization} and its endpoint ${r.endpoint_in_flight} of ${MAX_IN_FLIGHT_PER_ENDPOINT}: starved by other organizations' deliveries`,
            details: { org_id: r.org_id, endpoint_id: r.endpoint_id, attempts: r.attempts, next_attempt_at: r.next_attempt_at, waited_s: Number(r.waited_s) },
          },
    );
  }
}
