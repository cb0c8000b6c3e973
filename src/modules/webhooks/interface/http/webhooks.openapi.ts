import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Allow, IsBoolean, IsOptional, IsString } from 'class-validator';
import { EVENT_TYPES } from '../../domain/events';
import { DELIVERY_ERRORS, DELIVERY_STATUSES } from '../../domain/webhook';

/** Request and response schemas of /v1/webhook-endpoints. */

const EVENTS_DESCRIPTION = 'Event types to send, or exactly ["*"] for every type (future ones too); duplicates are dropped, order kept. Not `ping`.';

/** Body of POST /v1/webhook-endpoints/{id}/rotate-secret (optional). */
export class RotateWebhookSecretDto {
  @ApiPropertyOptional({
    description: 'true: the previous secret stops signing at once (a leaked secret), also during the overlap of an earlier rotation; default false (both sign for WEBHOOK_SECRET_OVERLAP_S)',
    example: true,
  })
  @IsOptional()
  @IsBoolean({ message: 'expire_previous must be true or false' })
  expire_previous?: boolean;
}

export class CreateWebhookEndpointDto {
  @ApiProperty({ type: String, maxLength: 2048, description: 'Absolute https URL, any port, no user info, reaching only public addresses', example: 'https://example.com/webhooks/cds' })
  @Allow()
  url: unknown;

  @ApiProperty({ type: [String], minItems: 1, description: EVENTS_DESCRIPTION, example: ['operation.succeeded', 'operation.failed'] })
  @Allow()
  events: unknown;

  @ApiPropertyOptional({ type: String, nullable: true, minLength: 1, maxLength: 256, example: 'Provisioning pipeline' })
  @Allow()
  description?: unknown;
}

export class UpdateWebhookEndpointDto {
  @ApiPropertyOptional({ type: String, maxLength: 2048, example: 'https://example.com/webhooks/cds' })
  @Allow()
  url?: unknown;

  @ApiPropertyOptional({ type: [String], minItems: 1, description: EVENTS_DESCRIPTION, example: ['*'] })
  @Allow()
  events?: unknown;

  @ApiPropertyOptional({ type: String, nullable: true, minLength: 1, maxLength: 256, example: null })
  @Allow()
  description?: unknown;

  @ApiPropertyOptional({ type: Boolean, description: 'true: disabled (reason manual), its pending deliveries failed (endpoint_disabled); false: enabled again' })
  @Allow()
  disabled?: unknown;
}

export class ListWebhookEndpointsQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Page size', example: 20 })
  @IsOptional() @IsString({ message: 'limit must be a whole number from 1 to 100' }) limit?: string;

  @ApiPropertyOptional({ description: 'The next_cursor of the previous page' })
  @IsOptional() @IsString({ message: 'cursor must be the next_cursor of a previous page' }) cursor?: string;
}

export class ListDeliveriesQuery extends ListWebhookEndpointsQuery {
  @ApiPropertyOptional({ enum: DELIVERY_STATUSES, description: 'Only deliveries in this status' })
  @IsOptional() @IsString({ message: `status must be one of ${DELIVERY_STATUSES.join(', ')}` }) status?: string;

  @ApiPropertyOptional({ enum: [...EVENT_TYPES, 'ping'], description: 'Only deliveries of this event type' })
  @IsOptional() @IsString({ message: 'event_type must be an event type such as operation.succeeded' }) event_type?: string;
}

@ApiSchema({ name: 'WebhookEndpoint', description: 'Where events are sent; never its secret' })
export class WebhookEndpointResponse {
  @ApiProperty({ example: 'we_Gh1Ij2Kl3Mn4Op5Qr6St7Uv8' })
  id: string;

  @ApiProperty({ example: 'https://example.com/webhooks/cds' })
  url: string;

  @ApiProperty({ type: [String], example: ['operation.succeeded', 'operation.failed'] })
  events: string[];

  @ApiProperty({ type: String, nullable: true, example: null })
  description: string | null;

  @ApiProperty({ enum: ['enabled', 'disabled'], example: 'enabled' })
  status: string;

  @ApiProperty({ type: String, nullable: true, description: 'null while enabled; manual (PATCH), gone (the receiver answered 410), failing (failures for WEBHOOK_DISABLE_AFTER_S)', example: null })
  disabled_reason: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'Since when attempts fail without a 2xx between them', example: null })
  failing_since: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'Until when the previous secret also signs (after a rotation)', example: null })
  secret_rotation_ends_at: string | null;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T10:00:00.000Z' })
  created_at: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T10:00:00.000Z' })
  updated_at: string;
}

@ApiSchema({ name: 'WebhookEndpointWithSecret', description: 'An endpoint and its signing secret, shown only in this answer' })
export class WebhookEndpointSecretResponse {
  @ApiProperty({ type: WebhookEndpointResponse })
  webhook_endpoint: WebhookEndpointResponse;

  @ApiProperty({ description: 'whsec_ + standard base64 of 24 random bytes: the key of the webhook-signature HMAC', example: 'whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYX' })
  secret: string;
}

@ApiSchema({ name: 'WebhookEndpointList' })
export class WebhookEndpointListResponse {
  @ApiProperty({ type: [WebhookEndpointResponse] })
  webhook_endpoints: WebhookEndpointResponse[];

  @ApiProperty({ type: String, nullable: true, example: null })
  next_cursor: string | null;
}

@ApiSchema({ name: 'WebhookDelivery', description: 'One event sent to one endpoint: its attempts; response bodies are never stored' })
export class WebhookDeliveryResponse {
  @ApiProperty({ example: 'dlv_Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8' })
  id: string;

  @ApiProperty({ example: 'we_Gh1Ij2Kl3Mn4Op5Qr6St7Uv8' })
  endpoint_id: string;

  @ApiProperty({ description: 'The webhook-id header: the same for every endpoint, attempt and redelivery', example: 'evt_Fx1Yk2Zl3Am4Bn5Co6Dp7Eq8' })
  event_id: string;

  @ApiProperty({ enum: [...EVENT_TYPES, 'ping'], example: 'operation.succeeded' })
  event_type: string;

  @ApiProperty({ enum: DELIVERY_STATUSES, example: 'succeeded' })
  status: string;

  @ApiProperty({ type: 'integer', minimum: 0, example: 1 })
  attempts: number;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T10:00:00.000Z' })
  created_at: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: '2026-11-21T10:00:00.120Z' })
  last_attempt_at: string | null;

  @ApiProperty({ type: 'integer', nullable: true, description: 'The HTTP status of the last attempt, if it got an answer', example: 200 })
  last_response_status: number | null;

  @ApiProperty({ type: String, nullable: true, description: `null, or why the last attempt failed: ${DELIVERY_ERRORS.join(', ')}`, example: null })
  last_error: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'When the next attempt is due (pending only)', example: null })
  next_attempt_at: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'The delivery this one redelivers', example: null })
  redelivery_of: string | null;
}

@ApiSchema({ name: 'WebhookDeliveryEnvelope' })
export class WebhookDeliveryEnvelope {
  @ApiProperty({ type: WebhookDeliveryResponse })
  delivery: WebhookDeliveryResponse;
}

@ApiSchema({ name: 'WebhookDeliveryList' })
export class WebhookDeliveryListResponse {
  @ApiProperty({ type: [WebhookDeliveryResponse] })
  deliveries: WebhookDeliveryResponse[];

  @ApiProperty({ type: String, nullable: true, example: null })
  next_cursor: string | null;
}
