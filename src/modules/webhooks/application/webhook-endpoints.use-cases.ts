import { Injectable } from '@nestjs/common';
import { Settings } from '../../../shared/config/settings';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { DomainError, invalidRequest, invalidState, notFound } from '../../../shared/kernel/errors/domain-error';
import { newId } from '../../../shared/kernel/ids/ids';
import { Page, decodeCursor, parseLimit } from '../../../shared/kernel/pagination/cursor';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import type { Actor } from '../../auth/application/api-keys.use-cases';
import { ALL_EVENTS, eventBody, isSubscribableEventType } from '../domain/events';
import { sealSecret } from '../domain/secret-box';
import { newWebhookSecret } from '../domain/signing';
import { resolveUrl } from '../domain/url-policy';
import { DELIVERY_STATUSES, DeliveryStatus, MAX_ENDPOINTS_PER_ORG, WebhookDelivery, WebhookEndpoint } from '../domain/webhook';
import { WebhookSignals } from './webhook-signals.port';
import { HostResolver } from './webhook-sender.port';
import { WebhookStore } from './webhooks.port';

export interface EndpointInput {
  url?: unknown;
  events?: unknown;
  description?: unknown;
  disabled?: unknown;
}

const EVENTS_RULE = 'events must be a non-empty array of event types (operation.succeeded, operation.failed, volume.deleted, wallet.top_up.succeeded, wallet.top_up.failed, wallet.top_up.expired, wallet.top_up.refunded, wallet.credited, server.deleted) or exactly ["*"]';

/** `events` checked: known types (not ping) with duplicates dropped in order, or exactly ["*"]. */
export function parseEvents(value: unknown): string[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > 100) throw invalidRequest(EVENTS_RULE, { field: 'events' });
  if (value.length === 1 && value[0] === ALL_EVENTS) return [ALL_EVENTS];
  if (!value.every(isSubscribableEventType)) throw invalidRequest(EVENTS_RULE, { field: 'events' });
  return [...new Set(value)];
}

export function parseDescription(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value.length < 1 || value.length > 256) throw invalidRequest('description must be null or 1 to 256 characters', { field: 'description' });
  return value;
}

/**
 * Event webhook endpoints of an organization (funding.md "Event webhooks"): created with a
 * signing secret shown once (stored sealed), changed, disabled, deleted, their secret rotated
 * with an overlap, pinged; their deliveries listed and redelivered.
 */
@Injectable()
export class WebhookEndpoints {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly store: WebhookStore,
    private readonly audit: AuditTrail,
    private readonly resolver: HostResolver,
    private readonly signals: WebhookSignals,
    private readonly clock: Clock,
    private readonly settings: Settings,
  ) {}

  /** The URL checked as funding.md lists it (resolved once; a name that does not resolve is refused too). */
  async checkUrl(value: unknown): Promise<string> {
    if (typeof value !== 'string') throw invalidRequest('url must be a string: an absolute https URL', { field: 'url' });
    const resolution = await resolveUrl(value, this.settings.webhookAllowPrivateUrls, (host) => this.resolver.lookup(host));
    if (!resolution.ok) throw invalidRequest(resolution.reason, { field: 'url' });
    return value;
  }

  async create(orgId: string, input: EndpointInput, actor: Actor): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    if (input.url === undefined) throw invalidRequest('url is required', { field: 'url' });
    const events = parseEvents(input.events);
    const description = parseDescription(input.description);
    const url = await this.checkUrl(input.url);
    const secret = newWebhookSecret();
    const endpoint = await this.uow.run(async () => {
      await this.store.lockOrganization(orgId);
      if ((await this.store.countEndpoints(orgId)) >= MAX_ENDPOINTS_PER_ORG) {
        throw new DomainError('quota_exceeded', `An organization may hold at most ${MAX_ENDPOINTS_PER_ORG} webhook endpoints, disabled ones included; delete one first`, { limit: MAX_ENDPOINTS_PER_ORG });
      }
      const now = this.clock.now();
      const id = newId('we');
      const created: WebhookEndpoint = {
        id, orgId, url, events, description, status: 'enabled', disabledReason: null, failingSince: null,
        secretSealed: sealSecret(secret, id, this.settings.webhookSecretsKey), previousSecretSealed: null, secretRotationEndsAt: null,
        createdAt: now, updatedAt: now,
      };
      await this.store.insertEndpoint(created);
      await this.audit.record({ orgId, actorType: actor.type, actorId: actor.id, ipAddress: actor.ip, action: 'webhook_endpoint.create', targetId: id, targetType: 'webhook_endpoint', data: { url, events, description } });
      return created;
    });
    return { endpoint, secret };
  }

  async get(orgId: string, id: string): Promise<WebhookEndpoint> {
    const endpoint = await this.store.findEndpoint(orgId, id);
    if (!endpoint) throw notFound(`Webhook endpoint ${id} not found`);
    return endpoint;
  }

  async list(orgId: string, query: { limit?: string; cursor?: string }): Promise<Page<WebhookEndpoint>> {
    const limit = parseLimit(query.limit);
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    return this.store.listEndpoints(orgId, limit, after);
  }

  /** PATCH: only the members given; the same values write nothing. */
  async update(orgId: string, id: string, input: EndpointInput, actor: Actor): Promise<WebhookEndpoint> {
    const events = input.events === undefined ? undefined : parseEvents(input.events);
    const description = input.description === undefined ? undefined : parseDescription(input.description);
    if (input.disabled !== undefined && typeof input.disabled !== 'boolean') throw invalidRequest('disabled must be true or false', { field: 'disabled' });
    const disabled = input.disabled as boolean | undefined;
    const url = input.url === undefined ? undefined : await this.checkUrl(input.url);
    return this.uow.run(async () => {
      const endpoint = await this.store.lockEndpoint(orgId, id);
      if (!endpoint) throw notFound(`Webhook endpoint ${id} not found`);
      const before: Record<string, unknown> = {};
      const after: Record<string, unknown> = {};
      const next = { ...endpoint };
      if (url !== undefined && url !== endpoint.url) {
        before.url = endpoint.url;
        after.url = next.url = url;
      }
      if (events !== undefined && JSON.stringify(events) !== JSON.stringify(endpoint.events)) {
        before.events = endpoint.events;
        after.events = next.events = events;
      }
      if (description !== undefined && description !== endpoint.description) {
        before.description = endpoint.description;
        after.description = next.description = description;
      }
      const now = this.clock.now();
      if (disabled === true && endpoint.status === 'enabled') {
        before.disabled = false;
        after.disabled = true;
        next.status = 'disabled';
        next.disabledReason = 'manual';
      } else if (disabled === false && endpoint.status === 'disabled') {
        before.disabled = true;
        after.disabled = false;
        next.status = 'enabled';
        next.disabledReason = null;
        next.failingSince = null;
      }
      if (Object.keys(after).length === 0) return endpoint;
      next.updatedAt = now;
      await this.store.saveEndpoint(next);
      if (after.disabled === true) await this.store.failPending(id, now);
      await this.audit.record({ orgId, actorType: actor.type, actorId: actor.id, ipAddress: actor.ip, action: 'webhook_endpoint.update', targetId: id, targetType: 'webhook_endpoint', data: { old: before, new: after } });
      return next;
    });
  }

  async delete(orgId: string, id: string, actor: Actor): Promise<void> {
    await this.uow.run(async () => {
      const endpoint = await this.store.lockEndpoint(orgId, id);
      if (!endpoint) throw notFound(`Webhook endpoint ${id} not found`);
      await this.store.deleteEndpoint(id);
      await this.audit.record({ orgId, actorType: actor.type, actorId: actor.id, ipAddress: actor.ip, action: 'webhook_endpoint.delete', targetId: id, targetType: 'webhook_endpoint', data: { url: endpoint.url } });
    });
  }

  /** A new secret; the old one also signs until secret_rotation_ends_at (now + WEBHOOK_SECRET_OVERLAP_S). */
  /**
   * A new signing secret. By default the previous one also signs for WEBHOOK_SECRET_OVERLAP_S
   * (rotating again meanwhile: 409); with expirePrevious it stops at once, also during an earlier
   * rotation's overlap (a leaked secret must not stay valid for a day).
   */
  async rotateSecret(orgId: string, id: string, actor: Actor, expirePrevious = false): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    const secret = newWebhookSecret();
    return this.uow.run(async () => {
      const endpoint = await this.store.lockEndpoint(orgId, id);
      if (!endpoint) throw notFound(`Webhook endpoint ${id} not found`);
      const now = this.clock.now();
      if (!expirePrevious && endpoint.secretRotationEndsAt && endpoint.secretRotationEndsAt.getTime() > now.getTime()) {
        throw invalidState(`Webhook endpoint ${id} is rotating its secret until ${endpoint.secretRotationEndsAt.toISOString()}; rotate again after that`);
      }
      const next: WebhookEndpoint = {
        ...endpoint,
        secretSealed: sealSecret(secret, id, this.settings.webhookSecretsKey),
        previousSecretSealed: expirePrevious ? null : endpoint.secretSealed,
        secretRotationEndsAt: expirePrevious ? null : new Date(now.getTime() + this.settings.webhookSecretOverlapS * 1000),
        updatedAt: now,
      };
      await this.store.saveEndpoint(next);
      await this.audit.record({ orgId, actorType: actor.type, actorId: actor.id, ipAddress: actor.ip, action: 'webhook_endpoint.rotate_secret', targetId: id, targetType: 'webhook_endpoint', data: { secret_rotation_ends_at: next.secretRotationEndsAt?.toISOString() ?? null, expire_previous: expirePrevious } });
      return { endpoint: next, secret };
    });
  }

  /** A `ping` event delivered to this endpoint alone. */
  async test(orgId: string, id: string): Promise<WebhookDelivery> {
    return this.uow.run(async () => {
      const endpoint = await this.store.lockEndpoint(orgId, id);
      if (!endpoint) throw notFound(`Webhook endpoint ${id} not found`);
      if (endpoint.status !== 'enabled') throw invalidState(`Webhook endpoint ${id} is disabled; enable it first`);
      const now = this.clock.now();
      const eventId = newId('evt');
      await this.store.insertEvent({ id: eventId, orgId, type: 'ping', createdAt: now, body: eventBody(eventId, 'ping', now, { endpoint_id: id }) });
      return this.newDelivery(endpoint.id, eventId, 'ping', null, now);
    });
  }

  async deliveries(orgId: string, id: string, query: { status?: string; event_type?: string; limit?: string; cursor?: string }): Promise<Page<WebhookDelivery>> {
    if (query.status !== undefined && !DELIVERY_STATUSES.includes(query.status as DeliveryStatus)) {
      throw invalidRequest(`status must be one of ${DELIVERY_STATUSES.join(', ')}`, { field: 'status' });
    }
    if (query.event_type !== undefined && query.event_type !== 'ping' && !isSubscribableEventType(query.event_type)) {
      throw invalidRequest('event_type must be an event type such as operation.succeeded', { field: 'event_type' });
    }
    const limit = parseLimit(query.limit);
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    await this.get(orgId, id);
    return this.store.listDeliveries(id, { status: query.status as DeliveryStatus | undefined, eventType: query.event_type, limit, after });
  }

  /** A new delivery of the same event (same webhook-id and body), due now. */
  async redeliver(orgId: string, id: string, deliveryId: string): Promise<WebhookDelivery> {
    return this.uow.run(async () => {
      const endpoint = await this.store.lockEndpoint(orgId, id);
      if (!endpoint) throw notFound(`Webhook endpoint ${id} not found`);
      const original = await this.store.findDelivery(id, deliveryId);
      if (!original) throw notFound(`Delivery ${deliveryId} of webhook endpoint ${id} not found`);
      if (endpoint.status !== 'enabled') throw invalidState(`Webhook endpoint ${id} is disabled; enable it first`);
      if (original.status === 'pending') throw invalidState(`Delivery ${deliveryId} is still pending; redeliver it once it ended`);
      return this.newDelivery(id, original.eventId, original.eventType, original.id, this.clock.now());
    });
  }

  private async newDelivery(endpointId: string, eventId: string, eventType: WebhookDelivery['eventType'], redeliveryOf: string | null, now: Date): Promise<WebhookDelivery> {
    const delivery: WebhookDelivery = {
      id: newId('dlv'), endpointId, eventId, eventType, status: 'pending', attempts: 0, createdAt: now, lastAttemptAt: null,
      lastResponseStatus: null, lastError: null, nextAttemptAt: now, redeliveryOf,
    };
    await this.store.insertDelivery(delivery);
    this.signals.announce();
    return delivery;
  }
}
