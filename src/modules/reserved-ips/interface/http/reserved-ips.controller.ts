import { Body, Controller, Delete, Get, Param, Patch, Post, Query, Req, Res } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { Principal } from '../../../auth/domain/principal';
import { ANY_ROLE, WRITER_ROLES } from '../../../auth/domain/principal';
import { ApiAuthenticated, ApiErrors, ApiIdempotencyKey, RATE_LIMITED_RESPONSE_HEADERS } from '../../../../shared/http/openapi';
import { ClientIp, CurrentPrincipal, RequireAccess } from '../../../auth/interface/http/access.decorators';
import { IdempotentExecution } from '../../../idempotency/application/idempotent-execution';
import { idempotencyScope, jsonResponse, sendOutcome, storableErrors } from '../../../idempotency/interface/http/idempotent-request';
import { ErrorCode } from '../../../../shared/kernel/errors/domain-error';
import { presentOperation } from '../../../operations/interface/http/operation.presenter';
import { Operation } from '../../../operations/domain/operation';
import { AssignIp, ReleaseIp, RenewIp, ReserveIp, ReservedIpQueries, UnassignIp, UpdateIp } from '../../application/reserved-ip.use-cases';
import { ReservedIp, presentReservedIp } from '../../domain/reserved-ip';
import { AssignIpBody, ListReservedIpsQuery, RenewIpBody, ReserveIpBody, UpdateIpBody } from './reserved-ips.dto';
import { ReservedIpActionResponse, ReservedIpListResponse, ReservedIpResponse } from './reserved-ips.openapi';

/** Stored for replay (lifecycle.md: 2xx, 402, 404 and 409). */
const STORED: readonly ErrorCode[] = ['not_found', 'invalid_state', 'insufficient_balance', 'conflict', 'out_of_stock'];

const ACCEPTED_HEADERS = {
  ...RATE_LIMITED_RESPONSE_HEADERS,
  Location: { required: true, description: 'The operation to poll: /v1/operations/{op_id}', schema: { type: 'string', example: '/v1/operations/op_8fKq2LmX9vR4tW7yZ3bN5cHd' } },
};

const WRITERS = 'API key scope vm:write, or a developer, admin or owner with a session.';
const ID_PARAM = { name: 'id', description: 'Reserved IP id', example: 'rip_8fKq2LmX9vR4tW7yZ3bN5cHd' };

@ApiTags('Reserved IPs')
@ApiAuthenticated()
@Controller('v1/reserved-ips')
export class ReservedIpsController {
  constructor(
    private readonly idempotent: IdempotentExecution,
    private readonly queries: ReservedIpQueries,
    private readonly reserveIp: ReserveIp,
    private readonly assignIp: AssignIp,
    private readonly unassignIp: UnassignIp,
    private readonly renewIp: RenewIp,
    private readonly releaseIp: ReleaseIp,
    private readonly updateIp: UpdateIp,
  ) {}

  private async accept(req: Request, res: Response, principal: Principal, work: () => Promise<{ reservedIp: ReservedIp; operation: Operation }>): Promise<void> {
    const outcome = await this.idempotent.run(
      idempotencyScope(req, principal.orgId),
      async () => {
        const { reservedIp, operation } = await work();
        return jsonResponse(202, { reserved_ip: presentReservedIp(reservedIp), operation: presentOperation(operation) }, { Location: `/v1/operations/${operation.id}` });
      },
      storableErrors(req, STORED),
    );
    sendOutcome(res, outcome);
  }

  @Post()
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'createReservedIp',
    summary: "Reserve an IPv4 address of a region's pool, prepaid for a term, optionally assigned to a server at once",
    description:
      `${WRITERS} In one transaction: an address of the region's pool (never one released less than IP_COOLDOWN_S ago), the reservation ` +
      "(status `allocating`), the hold of `reserved_ipv4_price_per_month[currency] × term_months` (frozen on it), and an ip.reserve operation to " +
      'poll (steps payment_reserved, allocating, and assigning with server_id). Errors in this order: 400 (the member named in details.field; ' +
      'a region selling no reserved addresses names region; a server in another region names server_id), 409 idempotency_conflict, 404 (server), ' +
      '409 invalid_state (the server neither running nor stopped; suspended: details.reason; an unfinished operation: details.operation_id; a ' +
      '409 conflict (a reserved address already: details.existing_id), 409 out_of_stock (no free address in the pool: nothing reserved), 402, 503 provider_unavailable.',
  })
  @ApiIdempotencyKey([202, 402, 404, 409])
  @ApiBody({ type: ReserveIpBody })
  @ApiAcceptedResponse({ description: 'Reservation accepted: the price is held; poll the operation', type: ReservedIpActionResponse, headers: ACCEPTED_HEADERS })
  @ApiErrors(
    'invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'rate_limited', 'idempotency_conflict', 'not_found', 'invalid_state',
    'conflict', 'out_of_stock', 'insufficient_balance', 'provider_unavailable',
  )
  async reserve(@CurrentPrincipal() principal: Principal, @Body() body: ReserveIpBody, @ClientIp() ip: string | null, @Req() req: Request, @Res() res: Response): Promise<void> {
    await this.accept(req, res, principal, () =>
      this.reserveIp.execute(principal, { region: body.region, termMonths: body.term_months, currency: body.currency, serverId: body.server_id, labels: body.labels }, ip),
    );
  }

  @Get()
  @RequireAccess({ scope: 'vm:read', roles: ANY_ROLE })
  @ApiOperation({
    operationId: 'listReservedIps',
    summary: "The organization's reserved addresses, newest first",
    description: 'API key scope vm:read, or any member with a session. Cursor pagination; filters region, status (without it every status but released) and label (key=value, repeatable).',
  })
  @ApiOkResponse({ description: 'A page of reserved addresses', type: ReservedIpListResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'unauthorized', 'forbidden', 'rate_limited')
  async list(@CurrentPrincipal() principal: Principal, @Query() query: ListReservedIpsQuery) {
    const page = await this.queries.list(principal, { limit: query.limit, cursor: query.cursor, region: query.region, status: query.status, label: query.label });
    return { reserved_ips: page.reservedIps.map(presentReservedIp), next_cursor: page.nextCursor };
  }

  @Get(':id')
  @RequireAccess({ scope: 'vm:read', roles: ANY_ROLE })
  @ApiOperation({ operationId: 'getReservedIp', summary: 'One reserved address of the organization (released ones too, with released_at)', description: 'API key scope vm:read, or any member with a session.' })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ description: 'The reserved address', type: ReservedIpResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('unauthorized', 'forbidden', 'not_found', 'rate_limited')
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return presentReservedIp(await this.queries.get(principal, id));
  }

  @Patch(':id')
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'updateReservedIp',
    summary: "Change a reserved address's labels or automatic renewal",
    description:
      `${WRITERS} Synchronous: answers 200 with the address. Members left out are unchanged; \`labels\` replaces the whole map. Errors in this ` +
      'order: 400 (the first bad member, named in details.field), 404, 409 invalid_state (released). Allowed while suspended.',
  })
  @ApiParam(ID_PARAM)
  @ApiBody({ type: UpdateIpBody })
  @ApiOkResponse({ type: ReservedIpResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'rate_limited', 'not_found', 'invalid_state')
  async update(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: UpdateIpBody, @ClientIp() ip: string | null) {
    return presentReservedIp(await this.updateIp.execute(principal, { id, labels: body.labels, autoRenew: body.auto_renew }, ip));
  }

  @Post(':id/assign')
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'assignReservedIp',
    summary: 'Assign a reserved address to a server (moving it from the server it is on)',
    description:
      `${WRITERS} An ip.assign operation (step assigning) routes the address to the server, beside its own ipv4; the server then shows ` +
      '`reserved_ip`. A server has at most one reserved address. No charge. Errors in this order: 400, 409 idempotency_conflict, 404 (address, ' +
      'server), 409 invalid_state (the address allocating, released, suspended (details.reason), busy (details.operation_id), or on this server ' +
      'already; the server neither running nor stopped, or busy), 409 conflict (the server holds another reserved address: details.existing_id), 503 provider_unavailable.',
  })
  @ApiParam(ID_PARAM)
  @ApiIdempotencyKey([202, 404, 409])
  @ApiBody({ type: AssignIpBody })
  @ApiAcceptedResponse({ description: 'Assignment accepted; poll the operation', type: ReservedIpActionResponse, headers: ACCEPTED_HEADERS })
  @ApiErrors('invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'rate_limited', 'idempotency_conflict', 'not_found', 'invalid_state', 'conflict', 'provider_unavailable')
  async assign(
    @CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: AssignIpBody, @ClientIp() ip: string | null, @Req() req: Request, @Res() res: Response,
  ): Promise<void> {
    await this.accept(req, res, principal, () => this.assignIp.execute(principal, { id, serverId: body.server_id }, ip));
  }

  @Post(':id/unassign')
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'unassignReservedIp',
    summary: 'Unassign a reserved address from its server; it stays reserved',
    description:
      `${WRITERS} An ip.unassign operation (step unassigning) routes the address to nothing; it is then \`available\`. Errors in this order: ` +
      '409 idempotency_conflict, 404, 409 invalid_state (not assigned, or busy: details.operation_id), 503 provider_unavailable.',
  })
  @ApiParam(ID_PARAM)
  @ApiIdempotencyKey([202, 404, 409])
  @ApiAcceptedResponse({ description: 'Unassignment accepted; poll the operation', type: ReservedIpActionResponse, headers: ACCEPTED_HEADERS })
  @ApiErrors('unauthorized', 'forbidden', 'rate_limited', 'idempotency_conflict', 'not_found', 'invalid_state', 'provider_unavailable')
  async unassign(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @ClientIp() ip: string | null, @Req() req: Request, @Res() res: Response): Promise<void> {
    await this.accept(req, res, principal, () => this.unassignIp.execute(principal, { id }, ip));
  }

  @Post(':id/renew')
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'renewReservedIp',
    summary: 'Renew a reserved address by a term, at the price it was reserved at, paid from the wallet',
    description:
      `${WRITERS} Reserves \`price_per_month[currency] × term_months\` and answers 202 with an ip.renew operation to poll; \`expires_at\` ` +
      'becomes max(expires_at, now) + term. A suspended address is available again once it succeeds (assigned to nothing). Errors in this ' +
      'order: 400, 409 idempotency_conflict, 404, 409 invalid_state (allocating, released, or an unfinished operation: details.operation_id), 402.',
  })
  @ApiParam(ID_PARAM)
  @ApiIdempotencyKey([202, 402, 404, 409])
  @ApiBody({ type: RenewIpBody })
  @ApiAcceptedResponse({ description: 'Renewal accepted: the price is reserved; poll the operation', type: ReservedIpActionResponse, headers: ACCEPTED_HEADERS })
  @ApiErrors('invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'rate_limited', 'idempotency_conflict', 'not_found', 'invalid_state', 'insufficient_balance')
  async renew(
    @CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: RenewIpBody, @ClientIp() ip: string | null, @Req() req: Request, @Res() res: Response,
  ): Promise<void> {
    await this.accept(req, res, principal, () => this.renewIp.execute(principal, { id, termMonths: body.term_months, currency: body.currency }, ip));
  }

  @Delete(':id')
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'releaseReservedIp',
    summary: 'Release a reserved address back to its region; the prepaid term is not refunded',
    description:
      `${WRITERS} An ip.release operation (unassigning when assigned, then releasing) ends it \`released\`; the address is handed out ` +
      'again after IP_COOLDOWN_S. **The prepaid term is not refunded.** Errors in this order: 409 idempotency_conflict, 404, 409 invalid_state ' +
      '(allocating, released already, or an unfinished operation: details.operation_id), 503 provider_unavailable.',
  })
  @ApiParam(ID_PARAM)
  @ApiIdempotencyKey([202, 404, 409])
  @ApiAcceptedResponse({ description: 'Release accepted; poll the operation', type: ReservedIpActionResponse, headers: ACCEPTED_HEADERS })
  @ApiErrors('unauthorized', 'forbidden', 'rate_limited', 'idempotency_conflict', 'not_found', 'invalid_state', 'provider_unavailable')
  async release(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @ClientIp() ip: string | null, @Req() req: Request, @Res() res: Response): Promise<void> {
    await this.accept(req, res, principal, () => this.releaseIp.execute(principal, { id }, ip));
  }
}
