import { Injectable } from '@nestjs/common';
import { Db } from '../../../shared/database/transaction';
import { Page, PageCursor, toPage } from '../../../shared/kernel/pagination/cursor';
import { AttemptOutcome, ClaimedDelivery, DeliveryListQuery, WebhookStore } from '../application/webhooks.port';
import { EventType } from '../domain/events';
import { DeliveryError, DeliveryStatus, DisabledReason, EndpointStatus, WebhookDelivery, WebhookEndpoint } from '../domain/webhook';

const TEXT = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

interface EndpointRow {
  id: string;
  org_id: string;
  url: string;
  events: string[];
  description: string | null;
  status: EndpointStatus;
  disabled_reason: DisabledReason | null;
  failing_since: Date | null;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  secret_rotation_ends_at: Date | null;
  created_at: Date;
  updated_at: Date;
  created_at_text: string;
}

const ENDPOINT_COLUMNS = `id, org_id, url, events, description, status, disabled_reason, failing_since, secret_sealed, previous_secret_sealed,
  secret_rotation_ends_at, created_at, updated_at, ${TEXT('created_at')} AS created_at_text`;

const toEndpoint = (r: EndpointRow): WebhookEndpoint => ({
  id: r.id,
  orgId: r.org_id,
  url: r.url,
  events: r.events,
  description: r.description,
  status: r.status,
  disabledReason: r.disabled_reason,
  failingSince: r.failing_since,
  secretSealed: r.secret_sealed,
  previousSecretSealed: r.previous_secret_sealed,
  secretRotationEndsAt: r.secret_rotation_ends_at,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

interface DeliveryRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: EventType;
  status: DeliveryStatus;
  attempts: number;
  created_at: Date;
  created_at_text: string;
  last_attempt_at: Date | null;
  last_response_status: number | null;
  last_error: DeliveryError | null;
  next_attempt_at: Date | null;
  redelivery_of: string | null;
}

const DELIVERY_COLUMNS = `id, endpoint_id, event_id, event_type, status, attempts, created_at, ${TEXT('created_at')} AS created_at_text, last_attempt_at,
  last_response_status, last_error, next_attempt_at, redelivery_of`;

const toDelivery = (r: DeliveryRow): WebhookDelivery => ({
  id: r.id,
  endpointId: r.endpoint_id,
  eventId: r.event_id,
  eventType: r.event_type,
  status: r.status,
  attempts: r.attempts,
  createdAt: r.created_at,
  lastAttemptAt: r.last_attempt_at,
  lastResponseStatus: r.last_response_status,
  lastError: r.last_error,
  nextAttemptAt: r.next_attempt_at,
  redeliveryOf: r.redelivery_of,
});

@Injectable()
export class TypeOrmWebhookStore extends WebhookStore {
  constructor(private readonly db: Db) {
    super();
  }

  async lockOrganization(orgId: string): Promise<void> {
    await this.db.exec(`SELECT 1 FROM organizations WHERE id = $1 FOR UPDATE`, [orgId]);
  }

  async countEndpoints(orgId: string): Promise<number> {
    const row = await this.db.one<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_endpoints WHERE org_id = $1`, [orgId]);
    return row?.n ?? 0;
  }

  async insertEndpoint(e: WebhookEndpoint): Promise<void> {
    await this.db.exec(
      `INSERT INTO webhook_endpoints (id, org_id, url, events, description, status, disabled_reason, failing_since, secret_sealed,
         previous_secret_sealed, secret_rotation_ends_at, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
      [e.id, e.orgId, e.url, e.events, e.description, e.status, e.disabledReason, e.failingSince, e.secretSealed, e.previousSecretSealed, e.secretRotationEndsAt, e.createdAt, e.updatedAt],
    );
  }

  async findEndpoint(orgId: string, id: string): Promise<WebhookEndpoint | undefined> {
    const row = await this.db.one<EndpointRow>(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE org_id = $1 AND id = $2`, [orgId, id]);
    return row && toEndpoint(row);
  }

  async lockEndpoint(orgId: string, id: string): Promise<WebhookEndpoint | undefined> {
    const row = await this.db.one<EndpointRow>(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE org_id = $1 AND id = $2 FOR NO KEY UPDATE`, [orgId, id]);
    return row && toEndpoint(row);
  }

  async listEndpoints(orgId: string, limit: number, after: PageCursor | undefined): Promise<Page<WebhookEndpoint>> {
    const params: unknown[] = [orgId, limit + 1];
    let where = 'org_id = $1';
    if (after) {
      params.push(after.createdAt, after.id);
      where += ` AND (created_at, id) < ($3::timestamptz, $4)`;
    }
    const rows = await this.db.query<EndpointRow>(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT $2`, params);
    return toPage(rows, limit, (r) => ({ createdAt: r.created_at_text, id: r.id }), toEndpoint);
  }

  async saveEndpoint(e: WebhookEndpoint): Promise<void> {
    await this.db.exec(
      `UPDATE webhook_endpoints SET url = $2, events = $3, description = $4, status = $5, disabled_reason = $6, failing_since = $7, secret_sealed = $8,
              previous_secret_sealed = $9, secret_rotation_ends_at = $10, updated_at = $11
        WHERE id = $1`,
      [e.id, e.url, e.events, e.description, e.status, e.disabledReason, e.failingSince, e.secretSealed, e.previousSecretSealed, e.secretRotationEndsAt, e.updatedAt],
    );
  }

  async deleteEndpoint(id: string): Promise<void> {
    await this.db.exec(
      `WITH gone AS (DELETE FROM webhook_deliveries WHERE endpoint_id = $1 RETURNING event_id)
       DELETE FROM webhook_events ev
        WHERE ev.id IN (SELECT event_id FROM gone)
          AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = ev.id AND d.endpoint_id <> $1)`,
      [id],
    );
    await this.db.exec(`DELETE FROM webhook_endpoints WHERE id = $1`, [id]);
  }

  async failPending(endpointId: string, at: Date): Promise<number> {
    const { affected } = await this.db.exec(
      `UPDATE webhook_deliveries SET status = 'failed', last_error = 'endpoint_disabled', next_attempt_at = NULL, locked_by = NULL, locked_until = NULL
        WHERE endpoint_id = $1 AND status = 'pending'`,
      [endpointId],
    );
    void at;
    return affected;
  }

  async insertEvent(e: { id: string; orgId: string; type: string; createdAt: Date; body: string }): Promise<void> {
    await this.db.exec(`INSERT INTO webhook_events (id, org_id, type, created_at, body) VALUES ($1, $2, $3, $4, $5)`, [e.id, e.orgId, e.type, e.createdAt, e.body]);
  }

  async insertDelivery(d: WebhookDelivery): Promise<void> {
    await this.db.exec(
      `INSERT INTO webhook_deliveries (id, endpoint_id, event_id, event_type, status, attempts, created_at, next_attempt_at, redelivery_of)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [d.id, d.endpointId, d.eventId, d.eventType, d.status, d.attempts, d.createdAt, d.nextAttemptAt, d.redeliveryOf],
    );
  }

  async findDelivery(endpointId: string, id: string): Promise<WebhookDelivery | undefined> {
    const row = await this.db.one<DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE endpoint_id = $1 AND id = $2`, [endpointId, id]);
    return row && toDelivery(row);
  }

  async listDeliveries(endpointId: string, q: DeliveryListQuery): Promise<Page<WebhookDelivery>> {
    const where = ['endpoint_id = $1'];
    const params: unknown[] = [endpointId];
    if (q.status !== undefined) {
      params.push(q.status);
      where.push(`status = $${params.length}`);
    }
    if (q.eventType !== undefined) {
      params.push(q.eventType);
      where.push(`event_type = $${params.length}`);
    }
    if (q.after) {
      params.push(q.after.createdAt, q.after.id);
      where.push(`(created_at, id) < ($${params.length - 1}::timestamptz, $${params.length})`);
    }
    params.push(q.limit + 1);
    const rows = await this.db.query<DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT $${params.length}`,
      params,
    );
    return toPage(rows, q.limit, (r) => ({ createdAt: r.created_at_text, id: r.id }), toDelivery);
  }

  async claim(workerId: string, now: Date, leaseUntil: Date, limit: number, perEndpoint: number, perOrganization: number): Promise<ClaimedDelivery[]> {
    // The endpoints with pending deliveries, one index probe each (a skip scan); for each, how
    // many of its deliveries are in flight (under a lease, any process) and its oldest due ones
    // up to its limit; each organization's in flight is its endpoints' sum. A candidate's place
    // is its organization's in flight plus its rank within the organization's candidates: the
    // claim takes the lowest places first (round-robin between organizations, the one holding
    // fewest slots first) and none beyond the organization's share.
    const rows = await this.db.query<{
      id: string; endpoint_id: string; event_id: string; attempts: number; url: string; secret_sealed: string;
      previous_secret_sealed: string | null; secret_rotation_ends_at: Date | null; body: string;
    }>(
      `WITH RECURSIVE pending_endpoints AS (
         (SELECT endpoint_id FROM webhook_deliveries WHERE status = 'pending' ORDER BY endpoint_id LIMIT 1)
         UNION ALL
         SELECT (SELECT d.endpoint_id FROM webhook_deliveries d WHERE d.status = 'pending' AND d.endpoint_id > p.endpoint_id ORDER BY d.endpoint_id LIMIT 1)
           FROM pending_endpoints p WHERE p.endpoint_id IS NOT NULL
       ), endpoints AS (
         SELECT e.id, e.org_id,
                (SELECT count(*) FROM webhook_deliveries f WHERE f.endpoint_id = e.id AND f.status = 'pending' AND f.locked_until >= $1)::int AS in_flight
           FROM pending_endpoints p JOIN webhook_endpoints e ON e.id = p.endpoint_id
       ), organizations AS (
         SELECT org_id, sum(in_flight)::int AS in_flight FROM endpoints GROUP BY org_id
       ), candidates AS (
         SELECT c.id, c.next_attempt_at, ep.org_id
           FROM endpoints ep CROSS JOIN LATERAL (
             SELECT d.id, d.next_attempt_at FROM webhook_deliveries d
              WHERE d.endpoint_id = ep.id AND d.status = 'pending' AND d.next_attempt_at <= $1 AND (d.locked_until IS NULL OR d.locked_until < $1)
              ORDER BY d.next_attempt_at, d.id
              LIMIT greatest($5 - ep.in_flight, 0)
              FOR UPDATE SKIP LOCKED
           ) c
       ), ranked AS (
         SELECT c.id, c.next_attempt_at,
                o.in_flight + row_number() OVER (PARTITION BY c.org_id ORDER BY c.next_attempt_at, c.id) AS place
           FROM candidates c JOIN organizations o ON o.org_id = c.org_id
       ), picked AS (
         SELECT id FROM ranked WHERE place <= $6 ORDER BY place, next_attempt_at, id LIMIT $4
       ), claimed AS (
         UPDATE webhook_deliveries d SET locked_by = $2, locked_until = $3 FROM picked p WHERE d.id = p.id
         RETURNING d.id, d.endpoint_id, d.event_id, d.attempts, d.next_attempt_at
       )
       SELECT c.id, c.endpoint_id, c.event_id, c.attempts, e.url, e.secret_sealed, e.previous_secret_sealed, e.secret_rotation_ends_at, ev.body
         FROM claimed c JOIN webhook_endpoints e ON e.id = c.endpoint_id JOIN webhook_events ev ON ev.id = c.event_id
        ORDER BY c.next_attempt_at, c.id`,
      [now, workerId, leaseUntil, limit, perEndpoint, perOrganization],
      'webhooks_claim',
    );
    return rows.map((r) => ({
      id: r.id,
      endpointId: r.endpoint_id,
      eventId: r.event_id,
      attempts: r.attempts,
      url: r.url,
      secretSealed: r.secret_sealed,
      previousSecretSealed: r.previous_secret_sealed,
      secretRotationEndsAt: r.secret_rotation_ends_at,
      body: r.body,
    }));
  }

  async lockEndpointById(id: string): Promise<WebhookEndpoint | undefined> {
    const row = await this.db.one<EndpointRow>(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = $1 FOR NO KEY UPDATE`, [id], 'webhooks_lock_endpoint');
    return row && toEndpoint(row);
  }

  async lockHeld(id: string, workerId: string): Promise<{ endpointId: string; orgId: string; attempts: number } | undefined> {
    const row = await this.db.one<{ endpoint_id: string; org_id: string; attempts: number }>(
      `SELECT d.endpoint_id, e.org_id, d.attempts FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE d.id = $1 AND d.status = 'pending' AND d.locked_by = $2 FOR UPDATE OF d`,
      [id, workerId],
      'webhooks_lock_held',
    );
    return row && { endpointId: row.endpoint_id, orgId: row.org_id, attempts: row.attempts };
  }

  async saveHeldSuccess(id: string, workerId: string, o: AttemptOutcome): Promise<boolean> {
    const { affected } = await this.db.exec(
      `UPDATE webhook_deliveries SET status = 'succeeded', attempts = attempts + 1, last_attempt_at = $3, last_response_status = $4, last_error = NULL,
              next_attempt_at = NULL, locked_by = NULL, locked_until = NULL
        WHERE id = $1 AND status = 'pending' AND locked_by = $2`,
      [id, workerId, o.at, o.responseStatus],
      'webhooks_save_success',
    );
    return affected === 1;
  }

  async saveAttempt(id: string, o: AttemptOutcome, status: DeliveryStatus, nextAttemptAt: Date | null): Promise<void> {
    await this.db.exec(
      `UPDATE webhook_deliveries SET status = $2, attempts = attempts + 1, last_attempt_at = $3, last_response_status = $4, last_error = $5,
              next_attempt_at = $6, locked_by = NULL, locked_until = NULL
        WHERE id = $1`,
      [id, status, o.at, o.responseStatus, o.error, nextAttemptAt],
      'webhooks_save_attempt',
    );
  }

  async markEndpointHealth(endpointId: string, healthy: boolean, at: Date): Promise<WebhookEndpoint | undefined> {
    if (healthy) {
      await this.db.exec(`UPDATE webhook_endpoints SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL`, [endpointId], 'webhooks_endpoint_healthy');
      return undefined;
    }
    const row = await this.db.one<EndpointRow>(
      `UPDATE webhook_endpoints SET failing_since = coalesce(failing_since, $2) WHERE id = $1 RETURNING ${ENDPOINT_COLUMNS}`,
      [endpointId, at],
      'webhooks_endpoint_failing',
    );
    return row && toEndpoint(row);
  }

  async purgeBefore(cutoff: Date, limit: number): Promise<number> {
    const deliveries = await this.db.exec(
      `DELETE FROM webhook_deliveries WHERE id IN (
         SELECT id FROM webhook_deliveries WHERE status <> 'pending' AND created_at < $1 ORDER BY created_at LIMIT $2)`,
      [cutoff, limit],
    );
    const events = await this.db.exec(
      `DELETE FROM webhook_events ev WHERE ev.id IN (
         SELECT e.id FROM webhook_events e WHERE e.created_at < $1 AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)
          ORDER BY e.created_at LIMIT $2)`,
      [cutoff, limit],
    );
    return deliveries.affected + events.affected;
  }
}
