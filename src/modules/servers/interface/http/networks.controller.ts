import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Req, Res } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBody, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ApiAuthenticated, ApiErrors, ApiIdempotencyKey, RATE_LIMITED_RESPONSE_HEADERS } from '../../../../shared/http/openapi';
import { ErrorCode } from '../../../../shared/kernel/errors/domain-error';
import type { Principal } from '../../../auth/domain/principal';
import { ANY_ROLE, WRITER_ROLES } from '../../../auth/domain/principal';
import { ClientIp, CurrentPrincipal, RequireAccess } from '../../../auth/interface/http/access.decorators';
import { IdempotentExecution } from '../../../idempotency/application/idempotent-execution';
import { idempotencyScope, jsonResponse, noContentResponse, sendOutcome, storableErrors } from '../../../idempotency/interface/http/idempotent-request';
import { presentOperation } from '../../../operations/interface/http/operation.presenter';
import { AttachServerToNetwork, DetachServerFromNetwork, NetworkUseCases } from '../../application/networks.use-cases';
import { ServerActionResult } from '../../application/server-power.use-cases';
import { AttachNetworkBody, CreateNetworkBody, ListNetworksQuery, NetworkListResponse, NetworkResponse, UpdateNetworkBody, presentNetwork } from './networks.openapi';
import { presentServer } from './server.presenter';
import { ServerActionResponse } from './servers.openapi';

const WRITERS = 'API key scope vm:write, or a developer, admin or owner with a session.';
const READERS = 'API key scope vm:read, or any member with a session.';

const ACCEPTED_HEADERS = {
  ...RATE_LIMITED_RESPONSE_HEADERS,
  Location: { required: true, description: 'The operation to poll: /v1/operations/{op_id}', schema: { type: 'string', example: '/v1/operations/op_8fKq2LmX9vR4tW7yZ3bN5cHd' } },
};

/** Stored for replay, as the other server actions' (2xx, 404 and 409). */
const ACTION_STORED_CODES: readonly ErrorCode[] = ['not_found', 'invalid_state', 'conflict', 'quota_exceeded'];

/** The organization's private networks (docs/reference/networks.md). */
@ApiTags('Networks')
@ApiAuthenticated()
@Controller('v1/networks')
export class NetworksController {
  constructor(
    private readonly networks: NetworkUseCases,
    private readonly idempotent: IdempotentExecution,
  ) {}

  @Post()
  @HttpCode(201)
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'createNetwork',
    summary: 'Create a private network in a region',
    description:
      `${WRITERS} Free. Errors in this order: 400 (name, region, ip_range: an RFC 1918 range of prefix /16 to /24 given as its ` +
      'network address, labels; then a region that does not exist), 409 idempotency_conflict, 409 conflict (the range overlaps ' +
      "another network of the organization in the region: details.existing_id; or the name is another network's).",
  })
  @ApiIdempotencyKey([201, 409])
  @ApiCreatedResponse({ type: NetworkResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'rate_limited', 'idempotency_conflict', 'conflict')
  async create(@CurrentPrincipal() principal: Principal, @Body() body: CreateNetworkBody, @ClientIp() ip: string | null, @Req() req: Request, @Res() res: Response): Promise<void> {
    const outcome = await this.idempotent.run(
      idempotencyScope(req, principal.orgId),
      async () => jsonResponse(201, presentNetwork(await this.networks.create(principal, { name: body.name, region: body.region, ipRange: body.ip_range, labels: body.labels }, ip))),
      storableErrors(req, ['conflict']),
    );
    sendOutcome(res, outcome);
  }

  @Get()
  @RequireAccess({ scope: 'vm:read', roles: ANY_ROLE })
  @ApiOperation({ operationId: 'listNetworks', summary: "The organization's private networks, newest first", description: `${READERS} Cursor pagination; filters region and label.` })
  @ApiOkResponse({ type: NetworkListResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'unauthorized', 'forbidden', 'rate_limited')
  async list(@CurrentPrincipal() principal: Principal, @Query() query: ListNetworksQuery): Promise<NetworkListResponse> {
    const page = await this.networks.list(principal, query);
    return { networks: page.networks.map(presentNetwork), next_cursor: page.nextCursor };
  }

  @Get(':id')
  @RequireAccess({ scope: 'vm:read', roles: ANY_ROLE })
  @ApiOperation({ operationId: 'getNetwork', summary: 'One private network of the organization', description: READERS })
  @ApiParam({ name: 'id', description: 'Network id', example: 'net_demoprivate1' })
  @ApiOkResponse({ type: NetworkResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('unauthorized', 'forbidden', 'not_found', 'rate_limited')
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<NetworkResponse> {
    return presentNetwork(await this.networks.get(principal, id));
  }

  /** Naturally idempotent, so no Idempotency-Key. */
  @Patch(':id')
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'updateNetwork',
    summary: "Rename a private network or replace its labels",
    description: `${WRITERS} Errors in this order: 400 (the first bad member), 404, 409 conflict (the name is another network's). The same body again writes no second audit row.`,
  })
  @ApiParam({ name: 'id', description: 'Network id', example: 'net_demoprivate1' })
  @ApiBody({ type: UpdateNetworkBody })
  @ApiOkResponse({ type: NetworkResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'rate_limited', 'not_found', 'conflict')
  async update(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: UpdateNetworkBody, @ClientIp() ip: string | null): Promise<NetworkResponse> {
    return presentNetwork(await this.networks.update(principal, { id, name: body.name, labels: body.labels }, ip));
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'deleteNetwork',
    summary: 'Delete a private network with no server attached',
    description: `${WRITERS} Errors in this order: 409 idempotency_conflict, 404, 409 invalid_state (servers are attached, or being attached or detached: named in the message; detach them first).`,
  })
  @ApiParam({ name: 'id', description: 'Network id', example: 'net_demoprivate1' })
  @ApiIdempotencyKey([204, 404, 409])
  @ApiNoContentResponse({ description: 'Deleted', headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('unauthorized', 'forbidden', 'rate_limited', 'idempotency_conflict', 'not_found', 'invalid_state')
  async remove(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @ClientIp() ip: string | null, @Req() req: Request, @Res() res: Response): Promise<void> {
    const outcome = await this.idempotent.run(
      idempotencyScope(req, principal.orgId),
      async () => {
        await this.networks.delete(principal, id, ip);
        return noContentResponse();
      },
      storableErrors(req, ['not_found', 'invalid_state']),
    );
    sendOutcome(res, outcome);
  }
}

/** POST /v1/servers/{id}/networks and /v1/servers/{id}/networks/{network_id}/detach: server actions (202 + operation + Location). */
@ApiTags('Servers')
@ApiAuthenticated()
@Controller('v1/servers')
export class ServerNetworksController {
  constructor(
    private readonly attach: AttachServerToNetwork,
    private readonly detach: DetachServerFromNetwork,
    private readonly idempotent: IdempotentExecution,
  ) {}

  private async accept(req: Request, res: Response, principal: Principal, work: () => Promise<ServerActionResult>): Promise<void> {
    const outcome = await this.idempotent.run(
      idempotencyScope(req, principal.orgId),
      async () => {
        const { server, operation } = await work();
        return jsonResponse(202, { server: presentServer(server), operation: presentOperation(operation) }, { Location: `/v1/operations/${operation.id}` });
      },
      storableErrors(req, ACTION_STORED_CODES),
    );
    sendOutcome(res, outcome);
  }

  @Post(':id/networks')
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'attachServerToNetwork',
    summary: 'Attach a server to a private network',
    description:
      `${WRITERS} The server must be running or stopped, the network in its region. A vm.attach_network operation (step ` +
      'attaching_network) gives it `ip`, or without it the first free address after the range\'s first three; the address is held ' +
      'from acceptance. At most 3 networks per server. Errors in this order: 400 (body), 409 idempotency_conflict, 404 (server), ' +
      '409 invalid_state (an unfinished operation: details.operation_id; then not running or stopped), 404 (network), 400 network_id ' +
      '(another region), 409 invalid_state (attached already), 409 quota_exceeded (3 networks, details.limit), 400 ip (not a usable ' +
      'address of the range), 409 conflict (the address is taken, also by a request racing this one; or the range is full), 503 provider_unavailable.',
  })
  @ApiParam({ name: 'id', description: 'Server id', example: 'vm_demoweb1' })
  @ApiIdempotencyKey([202, 404, 409])
  @ApiAcceptedResponse({ description: 'Attachment accepted: the address is held; poll the operation', type: ServerActionResponse, headers: ACCEPTED_HEADERS })
  @ApiErrors('invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'rate_limited', 'idempotency_conflict', 'not_found', 'invalid_state', 'quota_exceeded', 'conflict', 'provider_unavailable')
  async attachNetwork(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: AttachNetworkBody, @ClientIp() ip: string | null, @Req() req: Request, @Res() res: Response): Promise<void> {
    await this.accept(req, res, principal, () => this.attach.execute(principal, { serverId: id, networkId: body.network_id, ip: body.ip }, ip));
  }

  @Post(':id/networks/:network_id/detach')
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'detachServerFromNetwork',
    summary: 'Detach a server from a private network',
    description:
      `${WRITERS} No body. The server must be running or stopped. A vm.detach_network operation (step detaching_network) removes it ` +
      'from the network; its address there is free once it succeeds. Errors in this order: 409 idempotency_conflict, 404 (server), ' +
      '409 invalid_state (an unfinished operation: details.operation_id; then not running or stopped), 404 (not attached to that network), 503 provider_unavailable.',
  })
  @ApiParam({ name: 'id', description: 'Server id', example: 'vm_demoweb1' })
  @ApiParam({ name: 'network_id', description: 'Network id', example: 'net_demoprivate1' })
  @ApiIdempotencyKey([202, 404, 409])
  @ApiAcceptedResponse({ description: 'Detachment accepted; poll the operation', type: ServerActionResponse, headers: ACCEPTED_HEADERS })
  @ApiErrors('unauthorized', 'forbidden', 'rate_limited', 'idempotency_conflict', 'not_found', 'invalid_state', 'provider_unavailable')
  async detachNetwork(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Param('network_id') networkId: string, @ClientIp() ip: string | null, @Req() req: Request, @Res() res: Response): Promise<void> {
    await this.accept(req, res, principal, () => this.detach.execute(principal, { serverId: id, networkId }, ip));
  }
}
