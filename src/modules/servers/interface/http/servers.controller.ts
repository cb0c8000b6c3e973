import { Controller, Delete, Get, Param, Patch, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';

import { ApiAcceptedResponse, ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { IsIn, IsNotEmpty, IsOptional, IsString, Matches, ValidateIf } from 'class-validator';
import { RequestValidationPipe } from '../../../../shared/http/validation.pipe';
import { UpdateServer } from '../../application/update-server.use-case';
import { ApiAuthenticated, ApiErrors, ApiIdempotencyKey, RATE_LIMITED_RESPONSE_HEADERS } from '../../../../shared/http/openapi';
import { ErrorCode } from '../../../../shared/kernel/errors/domain-error';
import { IdempotentExecution } from '../../../idempotency/application/idempotent-execution';
import { idempotencyScope, jsonResponse, sendOutcome, storableErrors } from '../../../idempotency/interface/http/idempotent-request';
import { presentOperation } from '../../../operations/interface/http/operation.presenter';
import { DeleteServer } from '../../application/delete-server.use-case';
import type { Principal } from '../../../auth/domain/principal';
import { ANY_ROLE, WRITER_ROLES } from '../../../auth/domain/principal';
import { ClientIp, CurrentPrincipal, RequireAccess } from '../../../auth/interface/http/access.decorators';
import { LABEL_KEY_RULE } from '../../../prepaid/domain/labels';
import { SERVER_PAGE_LIMIT, ServerQueries } from '../../application/server-queries';
import { SERVER_NAME_PATTERN, SERVER_NAME_RULE, SERVER_STATUSES, ServerStatus } from '../../domain/server';
import { presentServer } from './server.presenter';
import { ServerDeletionResponse, ServerListResponse, ServerResponse } from './servers.openapi';
import { DeleteProtectionMember, LabelsMember } from '../../../prepaid/interface/http/label-members';
import { AutoRenewMember } from '../../../prepaid/interface/http/auto-renew-member';

const single = (name: string) => `${name} must be given once, as a string`;

/** Query of GET /v1/servers. Unknown parameters are ignored. */
export class ListServersQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, default: SERVER_PAGE_LIMIT, description: 'Page size', example: 50 })
  @IsOptional() @IsString({ message: 'limit must be a whole number from 1 to 100' }) limit?: string;

  @ApiPropertyOptional({ description: 'The next_cursor of the previous page' })
  @IsOptional() @IsString({ message: 'cursor must be the next_cursor of a previous page' }) cursor?: string;

  @ApiPropertyOptional({ enum: SERVER_STATUSES, description: 'Only servers in this status; without it every status but deleted' })
  @IsOptional()
  @IsIn(SERVER_STATUSES, { message: `status must be one of ${SERVER_STATUSES.join(', ')}` })
  @IsString({ message: single('status') })
  status?: ServerStatus;

  @ApiPropertyOptional({ description: 'Only servers in this region', example: 'id-jkt' })
  @IsOptional() @IsNotEmpty({ message: 'region must not be empty' }) @IsString({ message: single('region') }) region?: string;

  @ApiPropertyOptional({ description: 'Only servers in this zone', example: 'id-jkt-a' })
  @IsOptional() @IsNotEmpty({ message: 'zone must not be empty' }) @IsString({ message: single('zone') }) zone?: string;

  @ApiPropertyOptional({ description: 'Only the server with this exact name', example: 'web-1' })
  @IsOptional()
  @Matches(SERVER_NAME_PATTERN, { message: `name must be ${SERVER_NAME_RULE}` })
  @IsString({ message: single('name') })
  name?: string;

  @ApiPropertyOptional({
    type: [String],
    description: `key=value (the value may be empty); repeat it for several labels, all of which must match. Keys: ${LABEL_KEY_RULE}`,
    example: ['env=prod'],
  })
  @IsOptional() @IsString({ each: true, message: 'label must be key=value' }) label?: string | string[];

  @ApiPropertyOptional({ enum: ['true', 'false'], description: 'Only servers whose automatic renewal is on (true) or off (false)', example: 'true' })
  @IsOptional() @IsIn(['true', 'false'], { message: 'auto_renew must be true or false' }) @IsString({ message: single('auto_renew') }) auto_renew?: string;
}

/** Body of PATCH /v1/servers/{id}: every member optional; null is a wrong type. */
export class UpdateServerBody {
  @ApiPropertyOptional({ description: `New name (hostname), unique among the organization's live servers: ${SERVER_NAME_RULE}`, example: 'web-2' })
  @Matches(SERVER_NAME_PATTERN, { message: `name must be ${SERVER_NAME_RULE}` })
  @IsString({ message: `name must be a string: ${SERVER_NAME_RULE}` })
  @ValidateIf((body: UpdateServerBody) => body.name !== undefined)
  name?: string;

  @LabelsMember((rules) => `Replaces the whole map ({} removes every label). ${rules}`, { env: 'prod' })
  labels?: Record<string, string>;

  @DeleteProtectionMember('While true, DELETE is refused. Turning it off takes an admin or owner session, or an API key', true)
  delete_protection?: boolean;

  @AutoRenewMember('Turns automatic renewal on or off (allowed while suspended; a seeded server without a term cannot: 409 invalid_state); term_months left out keeps the current one')
  auto_renew?: unknown;
}

/** DELETE's stored answers besides 202 (servers.md: 2xx, 404 and 409 are stored and replayed). */
const DELETE_STORED_ERROR_CODES: readonly ErrorCode[] = ['not_found', 'invalid_state'];

const DELETE_ACCEPTED_HEADERS = {
  ...RATE_LIMITED_RESPONSE_HEADERS,
  Location: { required: true, description: 'The operation to poll: /v1/operations/{op_id}', schema: { type: 'string', example: '/v1/operations/op_8fKq2LmX9vR4tW7yZ3bN5cHd' } },
};

/** Validates PATCH's body in the handler, after the 403 the check order puts before it. */
const BODY_VALIDATION = new RequestValidationPipe();

@ApiTags('Servers')
@ApiAuthenticated()
@Controller('v1/servers')
export class ServersController {
  constructor(
    private readonly queries: ServerQueries,
    private readonly updateServer: UpdateServer,
    private readonly idempotent: IdempotentExecution,
    private readonly deleteServer: DeleteServer,
  ) {}

  @Get()
  @RequireAccess({ scope: 'vm:read', roles: ANY_ROLE })
  @ApiOperation({
    operationId: 'listServers',
    summary: "The organization's servers, newest first, filtered",
    description:
      'API key scope vm:read, or any member with a session. Cursor pagination (50 a page unless `limit` says otherwise). Without `status` ' +
      'every server that is not deleted; `status=deleted` the deleted ones. Every filter given must match; a bad value is 400 naming the parameter.',
  })
  @ApiOkResponse({ description: 'A page of servers', type: ServerListResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'unauthorized', 'forbidden', 'rate_limited')
  async list(@CurrentPrincipal() principal: Principal, @Query() query: ListServersQuery) {
    const page = await this.queries.list(principal, {
      limit: query.limit,
      cursor: query.cursor,
      status: query.status,
      region: query.region,
      zone: query.zone,
      name: query.name,
      label: query.label,
      autoRenew: query.auto_renew,
    });
    return { servers: page.servers.map(presentServer), next_cursor: page.nextCursor };
  }

  @Get(':id')
  @RequireAccess({ scope: 'vm:read', roles: ANY_ROLE })
  @ApiOperation({ operationId: 'getServer', summary: 'One server of the organization (deleted ones too, with deleted_at)', description: 'API key scope vm:read, or any member with a session.' })
  @ApiParam({ name: 'id', description: 'Server id', example: 'vm_demoweb1' })
  @ApiOkResponse({ description: 'The server', type: ServerResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('unauthorized', 'forbidden', 'not_found', 'rate_limited')
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return presentServer(await this.queries.get(principal, id));
  }

  /** PATCH {name?, labels?, delete_protection?, auto_renew?} → 200 with the Server; naturally idempotent, so no Idempotency-Key. */
  @Patch(':id')
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'updateServer',
    summary: "Change a server's name, labels, delete protection or automatic renewal",
    description:
      'API key scope vm:write, or a developer, admin or owner with a session. Synchronous: answers 200 with the server. Members left out ' +
      'are unchanged; `labels` replaces the whole map. Turning `delete_protection` off takes an admin or owner session or an API key ' +
      '(a developer session gets 403). Errors in this order: 403 (a developer session sending delete_protection: false for a protected ' +
      'server), 400 (the first bad member, named in details.field), 404, 409 invalid_state (deleted server), 409 conflict (name taken, ' +
      'details.existing_id). Sending the same body again leaves the same server and writes no second audit row.',
  })
  @ApiParam({ name: 'id', description: 'Server id', example: 'vm_demoweb1' })
  @ApiBody({ type: UpdateServerBody })
  @ApiOkResponse({ type: ServerResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'rate_limited', 'not_found', 'invalid_state', 'conflict')
  async update(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Req() req: Request, @ClientIp() ip: string | null) {
    await this.updateServer.refuseProtectionOff(principal, id, req.body);
    const body = (await BODY_VALIDATION.transform(req.body, { type: 'body', metatype: UpdateServerBody })) as UpdateServerBody;
    const server = await this.updateServer.execute(principal, { serverId: id, name: body.name, labels: body.labels, deleteProtection: body.delete_protection, autoRenew: body.auto_renew }, ip);
    return presentServer(server);
  }
  /** DELETE → 202 {server, operation} with Location (vm.delete); with an Idempotency-Key its 202, 404 and 409 answers are stored and replayed. */
  @Delete(':id')
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'deleteServer',
    summary: 'Delete a server: its disks are detached and kept, its instance deleted; the prepaid term is not refunded',
    description:
      'API key scope vm:write, or a developer, admin or owner with a session. The server becomes `deleting` at once; a vm.delete ' +
      'operation (steps detaching_volumes when disks are attached, then deleting_instance) unmounts and detaches each attached disk ' +
      '(left `available` with its data and term), deletes the instance and ends the server `deleted` (ipv4 null, its vCPUs given ' +
      "back to the region, its own firewall rules deleted). A refused unmount fails the operation: disks detached stay so, the " +
      'server regains its former status. **The prepaid term is not refunded.** Errors in this order: 409 idempotency_conflict, ' +
      '404, 409 invalid_state (an unfinished operation on the server, volume ones included: details.operation_id; deleted or ' +
      'already deleting; delete_protection on; neither running nor stopped), 503 provider_unavailable (the compute provider down, ' +
      'or the storage provider for a server with disks; nothing recorded).',
  })
  @ApiParam({ name: 'id', description: 'Server id', example: 'vm_demoweb1' })
  @ApiIdempotencyKey([202, 404, 409])
  @ApiAcceptedResponse({ description: 'Deletion accepted; poll the operation', type: ServerDeletionResponse, headers: DELETE_ACCEPTED_HEADERS })
  @ApiErrors('unauthorized', 'forbidden', 'rate_limited', 'idempotency_conflict', 'not_found', 'invalid_state', 'provider_unavailable')
  async remove(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @ClientIp() ip: string | null, @Req() req: Request, @Res() res: Response): Promise<void> {
    const outcome = await this.idempotent.run(
      idempotencyScope(req, principal.orgId),
      async () => {
        const { server, operation } = await this.deleteServer.execute(principal, id, ip);
        return jsonResponse(202, { server: presentServer(server), operation: presentOperation(operation) }, { Location: `/v1/operations/${operation.id}` });
      },
      storableErrors(req, DELETE_STORED_ERROR_CODES),
    );
    sendOutcome(res, outcome);
  }
}
