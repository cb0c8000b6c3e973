import { WebhookDelivery, WebhookEndpoint } from '../../domain/webhook';
import { WebhookDeliveryResponse, WebhookEndpointResponse } from './webhooks.openapi';

const iso = (d: Date | null): string | null => d && d.toISOString();

/** An endpoint as the API shows it: never its secret. */
export function presentEndpoint(e: WebhookEndpoint): WebhookEndpointResponse {
  return {
    id: e.id,
    url: e.url,
    events: e.events,
    description: e.description,
    status: e.status,
    disabled_reason: e.disabledReason,
    failing_since: iso(e.failingSince),
    secret_rotation_ends_at: iso(e.secretRotationEndsAt),
    created_at: e.createdAt.toISOString(),
    updated_at: e.updatedAt.toISOString(),
  };
}

export function presentDelivery(d: WebhookDelivery): WebhookDeliveryResponse {
  return {
    id: d.id,
    endpoint_id: d.endpointId,
    event_id: d.eventId,
    event_type: d.eventType,
    status: d.status,
    attempts: d.attempts,
    created_at: d.createdAt.toISOString(),
    last_attempt_at: iso(d.lastAttemptAt),
    last_response_status: d.lastResponseStatus,
    last_error: d.lastError,
    next_attempt_at: iso(d.nextAttemptAt),
    redelivery_of: d.redeliveryOf,
  };
}
