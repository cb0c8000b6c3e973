import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ApiAuthenticated, ApiErrors, ApiIdempotencyKey, RATE_LIMITED_RESPONSE_HEADERS } from '../../../../shared/http/openapi';
import { actorOf } from '../../../auth/application/api-keys.use-cases';
import { ANY_ROLE, WRITER_ROLES } from '../../../auth/domain/principal';
import type { Principal } from '../../../auth/domain/principal';
import { ClientIp, CurrentPrincipal, RequireAccess } from '../../../auth/interface/http/access.decorators';
import { IdempotentExecution } from '../../../idempotency/application/idempotent-execution';
import { idempotencyScope, jsonResponse, noContentResponse, sendOutcome, storableErrors } from '../../../idempotency/interface/http/idempotent-request';
import { CreateFirewallRule, DeleteFirewallRule, FirewallQueries, validateNewRule } from '../../application/firewall-rules.use-cases';
import {
  CreateFirewallRuleBody, FirewallPacketQuery, FirewallRuleListResponse, FirewallRuleResponse, ListFirewallRulesQuery, ServerFirewallResponse,
} from './access.openapi';
import { presentFirewall, presentFirewallRule } from './access.presenters';

const WRITERS = 'API key scope vm:write, or a developer, admin or owner with a session.';
const READERS = 'API key scope vm:read, or any member with a session.';

@ApiTags('Firewall rules')
@ApiAuthenticated()
@Controller('v1/firewall-rules')
export class FirewallRulesController {
  constructor(
    private readonly createRule: CreateFirewallRule,
    private readonly deleteRule: DeleteFirewallRule,
    private readonly queries: FirewallQueries,
    private readonly idempotent: IdempotentExecution,
  ) {}

  @Post()
  @HttpCode(201)
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'createFirewallRule',
    summary: 'Add an allow rule for one server or for every server of the organization',
    description:
      `${WRITERS} In force when the 201 is answered. Stored and answered in canonical form: host bits cleared, IPv6 as RFC 5952, ` +
      '"N-N" as "N", addresses de-duplicated and sorted (IPv4 first, by address, then prefix length). Errors in this order: 400 ' +
      '(the member named), 409 idempotency_conflict, 404 (server_id), 409 conflict (the same canonical rule exists, description ' +
      'aside: details.existing_id), 409 quota_exceeded (100 rules per organization).',
  })
  @ApiIdempotencyKey([201, 404, 409])
  @ApiCreatedResponse({ type: FirewallRuleResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'rate_limited', 'idempotency_conflict', 'not_found', 'conflict', 'quota_exceeded')
  async create(
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreateFirewallRuleBody,
    @ClientIp() ip: string | null,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const rule = validateNewRule(body);
    const outcome = await this.idempotent.run(
      idempotencyScope(req, principal.orgId),
      async () => jsonResponse(201, presentFirewallRule(await this.createRule.execute(principal.orgId, rule, actorOf(principal, ip)))),
      storableErrors(req, ['not_found', 'conflict', 'quota_exceeded']),
    );
    sendOutcome(res, outcome);
  }

  @Get()
  @RequireAccess({ scope: 'vm:read', roles: ANY_ROLE })
  @ApiOperation({
    operationId: 'listFirewallRules',
    summary: "The organization's firewall rules, oldest first",
    description: `${READERS} With server_id, that server's own rules only (GET /v1/servers/{id}/firewall shows all the rules in force on it).`,
  })
  @ApiOkResponse({ type: FirewallRuleListResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'unauthorized', 'forbidden', 'rate_limited')
  async list(@CurrentPrincipal() principal: Principal, @Query() query: ListFirewallRulesQuery): Promise<FirewallRuleListResponse> {
    const page = await this.queries.list(principal.orgId, query);
    return { firewall_rules: page.rules.map(presentFirewallRule), next_cursor: page.nextCursor };
  }

  @Get(':id')
  @RequireAccess({ scope: 'vm:read', roles: ANY_ROLE })
  @ApiOperation({ operationId: 'getFirewallRule', summary: 'One firewall rule of the organization', description: READERS })
  @ApiParam({ name: 'id', description: 'Firewall rule id', example: 'fwr_7hTq2LmX9vR4tW7yZ3bN5cHd' })
  @ApiOkResponse({ type: FirewallRuleResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('unauthorized', 'forbidden', 'not_found', 'rate_limited')
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<FirewallRuleResponse> {
    return presentFirewallRule(await this.queries.get(principal.orgId, id));
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({ operationId: 'deleteFirewallRule', summary: 'Delete a firewall rule', description: `${WRITERS} No longer in force when the 204 is answered. Again: 404. There is no PATCH: delete and create.` })
  @ApiParam({ name: 'id', description: 'Firewall rule id', example: 'fwr_7hTq2LmX9vR4tW7yZ3bN5cHd' })
  @ApiIdempotencyKey([204, 404])
  @ApiNoContentResponse({ description: 'Deleted', headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'unauthorized', 'forbidden', 'rate_limited', 'idempotency_conflict', 'not_found')
  async remove(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @ClientIp() ip: string | null, @Req() req: Request, @Res() res: Response): Promise<void> {
    const outcome = await this.idempotent.run(
      idempotencyScope(req, principal.orgId),
      async () => {
        await this.deleteRule.execute(principal.orgId, id, actorOf(principal, ip));
        return noContentResponse();
      },
      storableErrors(req, ['not_found']),
    );
    sendOutcome(res, outcome);
  }
}

/** GET /v1/servers/{id}/firewall: its own controller (the Servers module owns GET /v1/servers/{id}). */
@ApiTags('Firewall rules')
@ApiAuthenticated()
@Controller('v1/servers')
export class ServerFirewallController {
  constructor(private readonly queries: FirewallQueries) {}

  @Get(':id/firewall')
  @RequireAccess({ scope: 'vm:read', roles: ANY_ROLE })
  @ApiOperation({
    operationId: 'getServerFirewall',
    summary: 'The rules in force on a server, the defaults, and the verdict on a packet',
    description:
      `${READERS} Allow-only and stateful (replies pass): inbound is denied unless an in rule allows; outbound is allowed while ` +
      'no out rule is in force, then only what out rules allow. `rules`: the organization-wide rules and the server\'s own, oldest ' +
      'first. Given direction, protocol, address and (tcp, udp) port, `verdict` tells whether the packet passes and the oldest ' +
      'rule allowing it; a partial packet is 400 naming the missing parameter. Errors in this order: 400, 404.',
  })
  @ApiParam({ name: 'id', description: 'Server id', example: 'vm_demoweb1' })
  @ApiOkResponse({ type: ServerFirewallResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'unauthorized', 'forbidden', 'not_found', 'rate_limited')
  async firewall(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Query() query: FirewallPacketQuery): Promise<ServerFirewallResponse> {
    return presentFirewall(await this.queries.effective(principal.orgId, id, query));
  }
}
