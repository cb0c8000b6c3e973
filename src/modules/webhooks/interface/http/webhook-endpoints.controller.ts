import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Req, Res } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBody, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ApiAuthenticated, ApiErrors, ApiIdempotencyKey, NO_STORE_HEADER, RATE_LIMITED_RESPONSE_HEADERS } from '../../../../shared/http/openapi';
import { RequestValidationPipe } from '../../../../shared/http/validation.pipe';
import { IdempotentExecution } from '../../../idempotency/application/idempotent-execution';
import { idempotencyScope, jsonResponse, noContentResponse, sendOutcome, storableErrors } from '../../../idempotency/interface/http/idempotent-request';
import { actorOf } from '../../../auth/application/api-keys.use-cases';
import { ADMIN_ROLES } from '../../../auth/domain/principal';
import type { Principal } from '../../../auth/domain/principal';
import { ClientIp, CurrentPrincipal, RequireAccess } from '../../../auth/interface/http/access.decorators';
import { WebhookEndpoints } from '../../application/webhook-endpoints.use-cases';
import { presentDelivery, presentEndpoint } from './webhook.presenter';
import {
  CreateWebhookEndpointDto, ListDeliveriesQuery, ListWebhookEndpointsQuery, RotateWebhookSecretDto, UpdateWebhookEndpointDto, WebhookDeliveryEnvelope, WebhookDeliveryListResponse,
  WebhookEndpointListResponse, WebhookEndpointResponse, WebhookEndpointSecretResponse,
} from './webhooks.openapi';
import { encodeCursor } from '../../../../shared/kernel/pagination/cursor';

const ROTATE_BODY = new RequestValidationPipe();
const ACCESS = { scope: 'webhooks:write', roles: ADMIN_ROLES } as const;
const WHO = 'API key scope webhooks:write (GETs included), or a session of an admin or owner.';
const ID_PARAM = { name: 'id', description: 'Webhook endpoint id', example: 'we_Gh1Ij2Kl3Mn4Op5Qr6St7Uv8' };

@ApiTags('Webhook endpoints')
@ApiAuthenticated()
@Controller('v1/webhook-endpoints')
export class WebhookEndpointsController {
  constructor(
    private readonly endpoints: WebhookEndpoints,
    private readonly idempotent: IdempotentExecution,
  ) {}

  /** The 201 holds the secret: stored sealed for Idempotency-Key replays, as POST /v1/api-keys' token. */
  @Post()
  @HttpCode(201)
  @RequireAccess(ACCESS)
  @ApiOperation({ operationId: 'createWebhookEndpoint', summary: 'Create a webhook endpoint: its signing secret is in this answer only',
    description: `${WHO} At most 16 endpoints per organization, disabled ones included (409 quota_exceeded). The URL must be https and reach only public addresses (400 naming url). ` +
      'With an Idempotency-Key a retry gets the same answer, the same secret included (stored encrypted under the key), and creates no second endpoint.' })
  @ApiIdempotencyKey([201, 409])
  @ApiCreatedResponse({ type: WebhookEndpointSecretResponse, headers: { ...RATE_LIMITED_RESPONSE_HEADERS, ...NO_STORE_HEADER } })
  @ApiErrors('invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'idempotency_conflict', 'quota_exceeded', 'rate_limited')
  async create(@CurrentPrincipal() principal: Principal, @Body() body: CreateWebhookEndpointDto, @ClientIp() ip: string | null, @Req() req: Request, @Res() res: Response): Promise<void> {
    const scope = idempotencyScope(req, principal.orgId);
    const outcome = await this.idempotent.run(
      scope,
      async () => {
        const { endpoint, secret } = await this.endpoints.create(principal.orgId, body, actorOf(principal, ip));
        const created: WebhookEndpointSecretResponse = { webhook_endpoint: presentEndpoint(endpoint), secret };
        return jsonResponse(201, created);
      },
      storableErrors(req, ['quota_exceeded']),
      { seal: true },
    );
    // The 201 carries the signing secret: no cache (nor a proxy) may keep it, replays included.
    if (outcome.response.status === 201) res.setHeader('Cache-Control', 'no-store');
    sendOutcome(res, outcome);
  }

  @Get()
  @RequireAccess(ACCESS)
  @ApiOperation({ operationId: 'listWebhookEndpoints', summary: "The organization's webhook endpoints, newest first", description: WHO })
  @ApiOkResponse({ type: WebhookEndpointListResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'unauthorized', 'forbidden', 'rate_limited')
  async list(@CurrentPrincipal() principal: Principal, @Query() query: ListWebhookEndpointsQuery): Promise<WebhookEndpointListResponse> {
    const page = await this.endpoints.list(principal.orgId, query);
    return { webhook_endpoints: page.items.map(presentEndpoint), next_cursor: page.next && encodeCursor(page.next) };
  }

  @Get(':id')
  @RequireAccess(ACCESS)
  @ApiOperation({ operationId: 'getWebhookEndpoint', summary: 'One webhook endpoint', description: WHO })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: WebhookEndpointResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('unauthorized', 'forbidden', 'not_found', 'rate_limited')
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<WebhookEndpointResponse> {
    return presentEndpoint(await this.endpoints.get(principal.orgId, id));
  }

  @Patch(':id')
  @RequireAccess(ACCESS)
  @ApiOperation({ operationId: 'updateWebhookEndpoint', summary: 'Change a webhook endpoint (url, events, description, disabled)',
    description: `${WHO} Only the members given change; the same values write nothing. disabled true fails its pending deliveries (endpoint_disabled); false enables it again and clears failing_since.` })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: WebhookEndpointResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'not_found', 'rate_limited')
  async update(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: UpdateWebhookEndpointDto, @ClientIp() ip: string | null): Promise<WebhookEndpointResponse> {
    return presentEndpoint(await this.endpoints.update(principal.orgId, id, body, actorOf(principal, ip)));
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireAccess(ACCESS)
  @ApiOperation({ operationId: 'deleteWebhookEndpoint', summary: 'Delete a webhook endpoint, its deliveries and their events', description: `${WHO} Again: 404.` })
  @ApiParam(ID_PARAM)
  @ApiIdempotencyKey([204, 404])
  @ApiNoContentResponse({ description: 'Deleted', headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'unauthorized', 'forbidden', 'idempotency_conflict', 'not_found', 'rate_limited')
  async delete(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @ClientIp() ip: string | null, @Req() req: Request, @Res() res: Response): Promise<void> {
    const scope = idempotencyScope(req, principal.orgId);
    const outcome = await this.idempotent.run(
      scope,
      async () => {
        await this.endpoints.delete(principal.orgId, id, actorOf(principal, ip));
        return noContentResponse();
      },
      storableErrors(req, ['not_found']),
    );
    sendOutcome(res, outcome);
  }

  @Post(':id/rotate-secret')
  @HttpCode(200)
  @RequireAccess(ACCESS)
  @ApiOperation({ operationId: 'rotateWebhookSecret', summary: 'A new signing secret; the old one also signs for 24 hours',
    description: `${WHO} Until secret_rotation_ends_at every delivery carries two signatures, the new secret's first. Rotating again before then: 409 invalid_state, unless \`expire_previous: true\`, which ends the overlap at once (the previous secret stops signing; for a leaked secret). The answer (holding the secret) is stored sealed for Idempotency-Key replays.` })
  @ApiParam(ID_PARAM)
  @ApiIdempotencyKey([200, 404, 409])
  @ApiBody({ type: RotateWebhookSecretDto, required: false })
  @ApiOkResponse({ type: WebhookEndpointSecretResponse, headers: { ...RATE_LIMITED_RESPONSE_HEADERS, ...NO_STORE_HEADER } })
  @ApiErrors('invalid_request', 'unauthorized', 'forbidden', 'idempotency_conflict', 'not_found', 'invalid_state', 'rate_limited')
  async rotate(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @ClientIp() ip: string | null, @Req() req: Request, @Res() res: Response): Promise<void> {
    // The body is optional: none at all is `{}`.
    const raw: unknown = req.body === undefined ? {} : req.body;
    const body = (await ROTATE_BODY.transform(raw, { type: 'body', metatype: RotateWebhookSecretDto })) as RotateWebhookSecretDto;
    const scope = idempotencyScope(req, principal.orgId);
    const outcome = await this.idempotent.run(
      scope,
      async () => {
        const { endpoint, secret } = await this.endpoints.rotateSecret(principal.orgId, id, actorOf(principal, ip), body.expire_previous === true);
        const rotated: WebhookEndpointSecretResponse = { webhook_endpoint: presentEndpoint(endpoint), secret };
        return jsonResponse(200, rotated);
      },
      storableErrors(req),
      { seal: true },
    );
    // The 200 carries the new signing secret.
    if (outcome.response.status === 200) res.setHeader('Cache-Control', 'no-store');
    sendOutcome(res, outcome);
  }

  @Post(':id/test')
  @HttpCode(202)
  @RequireAccess(ACCESS)
  @ApiOperation({ operationId: 'testWebhookEndpoint', summary: 'Send a ping event to this endpoint alone', description: `${WHO} A disabled endpoint: 409 invalid_state.` })
  @ApiParam(ID_PARAM)
  @ApiIdempotencyKey([202, 404, 409])
  @ApiAcceptedResponse({ type: WebhookDeliveryEnvelope, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'unauthorized', 'forbidden', 'idempotency_conflict', 'not_found', 'invalid_state', 'rate_limited')
  async test(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    const scope = idempotencyScope(req, principal.orgId);
    const outcome = await this.idempotent.run(
      scope,
      async () => jsonResponse(202, { delivery: presentDelivery(await this.endpoints.test(principal.orgId, id)) }),
      storableErrors(req),
    );
    sendOutcome(res, outcome);
  }

  @Get(':id/deliveries')
  @RequireAccess(ACCESS)
  @ApiOperation({ operationId: 'listWebhookDeliveries', summary: "The endpoint's deliveries, newest first", description: `${WHO} Kept 30 days. Filters: status, event_type.` })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: WebhookDeliveryListResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'unauthorized', 'forbidden', 'not_found', 'rate_limited')
  async deliveries(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Query() query: ListDeliveriesQuery): Promise<WebhookDeliveryListResponse> {
    const page = await this.endpoints.deliveries(principal.orgId, id, query);
    return { deliveries: page.items.map(presentDelivery), next_cursor: page.next && encodeCursor(page.next) };
  }

  @Post(':id/deliveries/:delivery_id/redeliver')
  @HttpCode(202)
  @RequireAccess(ACCESS)
  @ApiOperation({ operationId: 'redeliverWebhook', summary: 'Deliver an event again: same webhook-id and body, a fresh schedule',
    description: `${WHO} The original still pending, or the endpoint disabled: 409 invalid_state.` })
  @ApiParam(ID_PARAM)
  @ApiParam({ name: 'delivery_id', description: 'Delivery id', example: 'dlv_Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8' })
  @ApiIdempotencyKey([202, 404, 409])
  @ApiAcceptedResponse({ type: WebhookDeliveryEnvelope, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'unauthorized', 'forbidden', 'idempotency_conflict', 'not_found', 'invalid_state', 'rate_limited')
  async redeliver(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Param('delivery_id') deliveryId: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    const scope = idempotencyScope(req, principal.orgId);
    const outcome = await this.idempotent.run(
      scope,
      async () => jsonResponse(202, { delivery: presentDelivery(await this.endpoints.redeliver(principal.orgId, id, deliveryId)) }),
      storableErrors(req),
    );
    sendOutcome(res, outcome);
  }
}
