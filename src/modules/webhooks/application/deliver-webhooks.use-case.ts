import { hostname } from 'node:os';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { Settings } from '../../../shared/config/settings';
import { UnitOfWork, WorkerUnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { randomBase62 } from '../../../shared/kernel/ids/ids';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { openSecret } from '../domain/secret-box';
import { signatureHeader } from '../domain/signing';
import { DisabledReason, MAX_IN_FLIGHT_PER_ENDPOINT, WebhookEndpoint, nextAttemptDelayMs, parseRetryAfter } from '../domain/webhook';
import { SendResult, WebhookSender } from './webhook-sender.port';
import { AttemptOutcome, ClaimedDelivery, WebhookStore } from './webhooks.port';
import { WebhooksTelemetry } from './webhooks-telemetry.port';

export const USER_AGENT = 'CloudDiskService-Webhooks/1';

/**
 * The delivery workers' use case: claim due deliveries (FOR UPDATE SKIP LOCKED, under a lease of
 * WORKER_LEASE_MS, at most 4 in flight per endpoint and WEBHOOK_CONCURRENCY_PER_ORGANIZATION per
 * organization over every process, round-robin between organizations, the one holding fewest
 * first, so a receiver that hangs costs its own organization's share only), POST each outside any
 * transaction, then record the outcome in a short transaction on the rows still held: a 2xx
 * succeeds; 410 fails it and disables the endpoint (`gone`); anything else is retried on the
 * schedule (WEBHOOK_RETRY_SCHEDULE_S, ±10% jitter, a Retry-After may lengthen one) until it is
 * spent, and a failure WEBHOOK_DISABLE_AFTER_S after the endpoint's failing_since disables it
 * (`failing`). An attempt whose outcome a crash lost is made again once its lease ends.
 */
@Injectable()
export class DeliverWebhooks {
  readonly workerId = `${hostname()}:${process.pid}:${randomBase62(8)}`;
  private readonly logger = new Logger('DeliverWebhooks');

  /**
   * The worker's pool (WorkerUnitOfWork), as the operations engine: HTTP requests cannot starve
   * the deliveries (measured: under a renewal load of 50 clients on the application's pool the
   * deliveries' short transactions queued behind the requests, 6 deliveries/s against 24/s here).
   */
  constructor(
    @Inject(WorkerUnitOfWork) private readonly uow: UnitOfWork,
    private readonly store: WebhookStore,
    private readonly sender: WebhookSender,
    private readonly audit: AuditTrail,
    private readonly telemetry: WebhooksTelemetry,
    private readonly clock: Clock,
    private readonly settings: Settings,
  ) {}

  async claim(limit: number): Promise<ClaimedDelivery[]> {
    if (limit <= 0) return [];
    return this.uow.run(() => {
      const now = this.clock.now();
      return this.store.claim(this.workerId, now, new Date(now.getTime() + this.settings.workerLeaseMs), limit, MAX_IN_FLIGHT_PER_ENDPOINT, this.settings.webhookConcurrencyPerOrganization);
    });
  }

  /** Claims and attempts due deliveries until none is due (tests, the bench); how many attempts were made. */
  async runUntilIdle(maxRounds = 100): Promise<number> {
    let total = 0;
    for (let i = 0; i < maxRounds; i++) {
      const claimed = await this.claim(this.settings.webhookConcurrency);
      if (claimed.length === 0) break;
      await Promise.all(claimed.map((d) => this.attempt(d)));
      total += claimed.length;
    }
    return total;
  }

  /** One attempt of a claimed delivery, then its outcome recorded. Never throws. */
  async attempt(delivery: ClaimedDelivery): Promise<void> {
    try {
      const secrets = this.secretsOf(delivery);
      const at = this.clock.now();
      const timestamp = Math.floor(at.getTime() / 1000);
      const result = await this.sender.send({
        url: delivery.url,
        headers: {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          'webhook-id': delivery.eventId,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signatureHeader(secrets, delivery.eventId, timestamp, delivery.body),
        },
        body: delivery.body,
        timeoutMs: this.settings.webhookTimeoutMs,
        allowPrivate: this.settings.webhookAllowPrivateUrls,
      });
      await this.record(delivery, this.outcomeOf(result, at));
    } catch (err) {
      // Nothing recorded: the lease runs out and the attempt is made again.
      this.logger.warn({ msg: 'could not record a webhook attempt; it is made again after its lease', delivery_id: delivery.id, err: err instanceof Error ? err.message : String(err) });
    }
  }

  /** The current secret, and during a rotation the previous one after it. */
  private secretsOf(d: ClaimedDelivery): string[] {
    const key = this.settings.webhookSecretsKey;
    const secrets = [openSecret(d.secretSealed, d.endpointId, key)];
    if (d.previousSecretSealed && d.secretRotationEndsAt && d.secretRotationEndsAt.getTime() > this.clock.now().getTime()) {
      secrets.push(openSecret(d.previousSecretSealed, d.endpointId, key));
    }
    return secrets;
  }

  private outcomeOf(result: SendResult, at: Date): AttemptOutcome {
    if ('error' in result) return { at, responseStatus: null, error: result.error, retryAfterS: null };
    const ok = result.status >= 200 && result.status < 300;
    return { at, responseStatus: result.status, error: ok ? null : 'http_status', retryAfterS: ok ? null : parseRetryAfter(result.retryAfter, at) };
  }

  private async record(delivery: ClaimedDelivery, outcome: AttemptOutcome): Promise<void> {
    this.telemetry.attempted(outcome.error ?? 'success');
    if (outcome.error === null) {
      // A success, in one transaction: the endpoint's failing_since cleared first (the endpoint
      // answered 2xx; a statement that changes nothing when it was not failing, and locks nothing),
      // then the delivery, if still held. The endpoint's row before the delivery's: the order
      // PATCH and DELETE follow, so no transaction holds a delivery's row while it waits for the endpoint's.
      const saved = await this.uow.run(async () => {
        await this.store.markEndpointHealth(delivery.endpointId, true, outcome.at);
        return this.store.saveHeldSuccess(delivery.id, this.workerId, outcome);
      });
      if (saved) this.telemetry.ended('succeeded');
      return;
    }
    const ended = await this.uow.run(async (): Promise<'succeeded' | 'failed' | undefined> => {
      // The endpoint's row first, then the delivery's: the order PATCH and DELETE follow.
      const endpoint = await this.store.lockEndpointById(delivery.endpointId);
      const held = endpoint && (await this.store.lockHeld(delivery.id, this.workerId));
      if (!endpoint || !held) return undefined; // disabled, deleted, or taken over meanwhile
      const now = this.clock.now();
      if (outcome.responseStatus === 410) {
        await this.store.saveAttempt(delivery.id, outcome, 'failed', null);
        await this.disable(endpoint, 'gone', now);
        return 'failed';
      }
      const delay = nextAttemptDelayMs(this.settings.webhookRetryScheduleS, held.attempts + 1, outcome.retryAfterS);
      await this.store.saveAttempt(delivery.id, outcome, delay === null ? 'failed' : 'pending', delay === null ? null : new Date(now.getTime() + delay));
      const failing = await this.store.markEndpointHealth(endpoint.id, false, now);
      if (failing?.failingSince && now.getTime() - failing.failingSince.getTime() >= this.settings.webhookDisableAfterS * 1000) {
        await this.disable(failing, 'failing', now);
        return 'failed';
      }
      return delay === null ? 'failed' : undefined;
    });
    if (ended) this.telemetry.ended(ended);
  }

  /** 410, or failing for WEBHOOK_DISABLE_AFTER_S: the endpoint disabled, its pending deliveries failed, audited as the system. */
  private async disable(endpoint: WebhookEndpoint, reason: DisabledReason, now: Date): Promise<void> {
    if (endpoint.status === 'disabled') return;
    await this.store.saveEndpoint({ ...endpoint, status: 'disabled', disabledReason: reason, updatedAt: now });
    const failed = await this.store.failPending(endpoint.id, now);
    for (let i = 0; i < failed; i++) this.telemetry.ended('failed');
    await this.audit.record({ orgId: endpoint.orgId, actorType: 'system', actorId: null, ipAddress: null, requestId: null, action: 'webhook_endpoint.disable', targetId: endpoint.id, targetType: 'webhook_endpoint', data: { reason } });
    this.logger.warn({ msg: 'webhook endpoint disabled', endpoint_id: endpoint.id, reason });
  }
}
