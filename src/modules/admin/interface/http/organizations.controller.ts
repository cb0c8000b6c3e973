import { Body, Controller, Get, HttpCode, Param, Post, Put, Query, Req, Res, Type } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { ApiOperation, ApiProperty, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { Allow, IsDefined, IsOptional, IsString } from 'class-validator';
import type { Request, Response } from 'express';
import { IdempotentExecution } from '../../../idempotency/application/idempotent-execution';
import { jsonResponse, sendOutcome, storableErrors } from '../../../idempotency/interface/http/idempotent-request';
import { OrganizationControls, OrganizationDetail } from '../../application/organization-controls';
import { adminIdempotencyScope } from './admin-idempotency';
import { notFound } from '../../../../shared/kernel/errors/domain-error';
import { Money, isCurrency } from '../../../../shared/kernel/money/money';
import { AuditLogQueryDto } from '../../../audit/interface/http/audit-log.openapi';
import { AuditLogController } from '../../../audit/interface/http/audit-log.controller';
import { Principal, SCOPES } from '../../../auth/domain/principal';
import { ListTopUpsQueryDto } from '../../../funding/interface/http/top-ups.openapi';
import { TopUpsController } from '../../../funding/interface/http/top-ups.controller';
import { ListOperationsQuery, OperationsController } from '../../../operations/interface/http/operations.controller';
import { ListServersQuery, ServersController } from '../../../servers/interface/http/servers.controller';
import { ListVolumesQuery } from '../../../volumes/interface/http/volumes.dto';
import { VolumesController } from '../../../volumes/interface/http/volumes.controller';
import { WalletTransactionsQueryDto } from '../../../wallet/interface/http/wallet.openapi';
import { WalletController } from '../../../wallet/interface/http/wallet.controller';
import { ListWebhookEndpointsQuery } from '../../../webhooks/interface/http/webhooks.openapi';
import { WebhookEndpointsController } from '../../../webhooks/interface/http/webhook-endpoints.controller';
import { ALL_STAFF, OPERATOR, StaffPrincipal } from '../../domain/staff';
import { AdminController, AdminRoute, CurrentStaff, auditTarget } from './admin.decorators';
import { decodeCursor, encodeCursor, pageLimit } from './admin-query';

/** The defaults of the per-organization limits (null override). */
export const DEFAULT_LIMITS = { servers: 25, api_keys: 20, firewall_rules: 100 } as const;

export class SearchOrganizationsQuery {
  @ApiPropertyOptional({ description: 'An organization id, a name prefix (any case), or a member email', example: 'org_demo' })
  @IsOptional() @IsString({ message: 'q must be a string' }) q?: string;
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, default: 50 })
  @IsOptional() @IsString({ message: 'limit must be a whole number from 1 to 100' }) limit?: string;
  @ApiPropertyOptional({ description: 'The next_cursor of the previous page' })
  @IsOptional() @IsString({ message: 'cursor must be the next_cursor of a previous page' }) cursor?: string;
}

export function presentOrganizationDetail(o: OrganizationDetail) {
  return {
    id: o.id,
    name: o.name,
    created_at: o.createdAt.toISOString(),
    suspended: o.suspendedAt !== null,
    suspended_at: o.suspendedAt && o.suspendedAt.toISOString(),
    suspension_reason: o.suspensionReason,
    members: o.members.map((m) => ({ user_id: m.userId, email: m.email, role: m.role, joined_at: m.joinedAt.toISOString() })),
    wallet: {
      balances: o.balances.map((b) =>
        isCurrency(b.currency)
          ? { currency: b.currency, available: Money.ofMinor(b.currency, BigInt(b.available)).format(), reserved: Money.ofMinor(b.currency, BigInt(b.reserved)).format() }
          : b,
      ),
    },
    live_servers: o.liveServers,
    live_volumes: o.liveVolumes,
    limits: {
      servers: o.limits.servers ?? DEFAULT_LIMITS.servers,
      api_keys: o.limits.apiKeys ?? DEFAULT_LIMITS.api_keys,
      firewall_rules: o.limits.firewallRules ?? DEFAULT_LIMITS.firewall_rules,
      overrides: { servers: o.limits.servers, api_keys: o.limits.apiKeys, firewall_rules: o.limits.firewallRules },
    },
    usage: { servers: o.usage.servers, api_keys: o.usage.apiKeys, firewall_rules: o.usage.firewallRules },
  };
}

export class OrganizationLimitsDto {
  @ApiPropertyOptional({ type: 'integer', nullable: true, minimum: 0, maximum: 100000, description: 'Live servers (default 25); null restores the default' })
  @Allow() servers?: number | null;
  @ApiPropertyOptional({ type: 'integer', nullable: true, minimum: 0, maximum: 100000, description: 'Active API keys (default 20); null restores the default' })
  @Allow() api_keys?: number | null;
  @ApiPropertyOptional({ type: 'integer', nullable: true, minimum: 0, maximum: 100000, description: 'Firewall rules (default 100); null restores the default' })
  @Allow() firewall_rules?: number | null;
}

export class SuspendOrganizationDto {
  @ApiProperty({ minLength: 1, maxLength: 500, example: 'Abuse report SUP-99: outbound spam' })
  @IsString({ message: 'reason must be 1 to 500 characters' }) @IsDefined({ message: 'reason is required' })
  reason: string;
}

type Staff = StaffPrincipal & { justification: string | null };

/**
 * Organizations for staff: search, detail, and a read-through of its resources in the public
 * routes' own shapes (the public controllers answer, for a read-only stand-in of the organization).
 */
@ApiTags('Organizations')
@AdminController()
@Controller('admin/v1/organizations')
export class AdminOrganizationsController {
  constructor(
    private readonly moduleRef: ModuleRef,
    private readonly controls: OrganizationControls,
    private readonly idempotent: IdempotentExecution,
  ) {}

  @Put(':id/limits')
  @AdminRoute({ roles: OPERATOR, justification: true })
  @ApiOperation({ operationId: 'setOrganizationLimits', summary: 'Per-organization limits: servers, API keys, firewall rules (null restores the default; below what is in use: 409 conflict)' })
  async setLimits(@Param('id') id: string, @Body() body: OrganizationLimitsDto, @CurrentStaff() staff: Staff, @Req() req: Request, @Res() res: Response): Promise<void> {
    await this.write(req, res, id, () => this.controls.setLimits(id, { ...body }, staff));
  }

  @Post(':id/suspend')
  @HttpCode(200)
  @AdminRoute({ roles: OPERATOR, justification: true })
  @ApiOperation({ operationId: 'suspendOrganization', summary: "Suspend an organization: its resources and reads remain, every customer write is 403 organization_suspended" })
  async suspend(@Param('id') id: string, @Body() body: SuspendOrganizationDto, @CurrentStaff() staff: Staff, @Req() req: Request, @Res() res: Response): Promise<void> {
    await this.write(req, res, id, () => this.controls.suspend(id, body.reason, staff));
  }

  @Post(':id/unsuspend')
  @HttpCode(200)
  @AdminRoute({ roles: OPERATOR, justification: true })
  @ApiOperation({ operationId: 'unsuspendOrganization', summary: 'Lift a suspension' })
  async unsuspend(@Param('id') id: string, @CurrentStaff() staff: Staff, @Req() req: Request, @Res() res: Response): Promise<void> {
    await this.write(req, res, id, () => this.controls.unsuspend(id, staff));
  }

  /** A change, at most once per Idempotency-Key; the answer is the organization after it. */
  private async write(req: Request, res: Response, id: string, change: () => Promise<void>): Promise<void> {
    const outcome = await this.idempotent.run(
      adminIdempotencyScope(req),
      async () => {
        await change();
        const detail = await this.controls.detail(id);
        if (!detail) throw notFound(`Organization ${id} not found`);
        return jsonResponse(200, { organization: presentOrganizationDetail(detail) });
      },
      storableErrors(req, ['not_found', 'conflict']),
    );
    sendOutcome(res, outcome);
  }

  @Get()
  @AdminRoute({ roles: ALL_STAFF })
  @ApiOperation({ operationId: 'searchOrganizations', summary: 'Find organizations by id, name prefix or member email; cursor paginated by id' })
  async search(@Query() query: SearchOrganizationsQuery): Promise<unknown> {
    const limit = pageLimit(query.limit);
    const after = decodeCursor('o1', query.cursor, /^[A-Za-z0-9_.-]{1,128}$/);
    const q = query.q?.trim();
    const rows = await this.controls.search(q === '' ? undefined : q, limit + 1, after);
    const page = rows.slice(0, limit);
    return {
      organizations: page.map((o) => ({ id: o.id, name: o.name, created_at: o.createdAt.toISOString(), suspended: o.suspendedAt !== null })),
      next_cursor: rows.length > limit ? encodeCursor('o1', page[page.length - 1].id) : null,
    };
  }

  @Get(':id')
  @AdminRoute({ roles: ALL_STAFF, justification: true })
  @ApiOperation({ operationId: 'getOrganization', summary: 'An organization: members, wallet balances, live servers and volumes, limits, suspension' })
  async get(@Param('id') id: string): Promise<unknown> {
    const detail = await this.controls.detail(id);
    if (!detail) throw notFound(`Organization ${id} not found`);
    return { organization: presentOrganizationDetail(detail) };
  }

  @Get(':id/servers')
  @AdminRoute({ roles: ALL_STAFF, justification: true })
  @ApiOperation({ operationId: 'listOrganizationServers', summary: "The organization's servers, as GET /v1/servers lists them" })
  async servers(@Param('id') id: string, @Query() query: ListServersQuery, @Req() req: Request): Promise<unknown> {
    return this.readThrough(ServersController, id, req, (c, p) => c.list(p, query));
  }

  @Get(':id/volumes')
  @AdminRoute({ roles: ALL_STAFF, justification: true })
  @ApiOperation({ operationId: 'listOrganizationVolumes', summary: "The organization's volumes, as GET /v1/volumes lists them" })
  async volumes(@Param('id') id: string, @Query() query: ListVolumesQuery, @Req() req: Request): Promise<unknown> {
    return this.readThrough(VolumesController, id, req, (c, p) => c.list(p, query));
  }

  @Get(':id/operations')
  @AdminRoute({ roles: ALL_STAFF, justification: true })
  @ApiOperation({ operationId: 'listOrganizationOperations', summary: "The organization's operations, as GET /v1/operations lists them" })
  async operations(@Param('id') id: string, @Query() query: ListOperationsQuery, @Req() req: Request): Promise<unknown> {
    return this.readThrough(OperationsController, id, req, (c, p) => c.list(p, query));
  }

  @Get(':id/wallet/transactions')
  @AdminRoute({ roles: ALL_STAFF, justification: true })
  @ApiOperation({ operationId: 'listOrganizationWalletTransactions', summary: "The organization's wallet history, as GET /v1/wallet/transactions lists it" })
  async transactions(@Param('id') id: string, @Query() query: WalletTransactionsQueryDto, @Req() req: Request): Promise<unknown> {
    return this.readThrough(WalletController, id, req, (c, p) => c.transactions(p, query));
  }

  @Get(':id/top-ups')
  @AdminRoute({ roles: ALL_STAFF, justification: true })
  @ApiOperation({ operationId: 'listOrganizationTopUps', summary: "The organization's top-ups, as GET /v1/wallet/top-ups lists them" })
  async topUps(@Param('id') id: string, @Query() query: ListTopUpsQueryDto, @Req() req: Request): Promise<unknown> {
    return this.readThrough(TopUpsController, id, req, (c, p) => c.list(p, query));
  }

  @Get(':id/audit-log')
  @AdminRoute({ roles: ALL_STAFF, justification: true })
  @ApiOperation({ operationId: 'listOrganizationAuditLog', summary: "The organization's audit log, as GET /v1/audit-log lists it" })
  async auditLog(@Param('id') id: string, @Query() query: AuditLogQueryDto, @Req() req: Request): Promise<unknown> {
    return this.readThrough(AuditLogController, id, req, (c, p) => c.list(p, query));
  }

  @Get(':id/webhook-endpoints')
  @AdminRoute({ roles: ALL_STAFF, justification: true })
  @ApiOperation({ operationId: 'listOrganizationWebhookEndpoints', summary: "The organization's webhook endpoints, as GET /v1/webhook-endpoints lists them (never a secret)" })
  async webhookEndpoints(@Param('id') id: string, @Query() query: ListWebhookEndpointsQuery, @Req() req: Request): Promise<unknown> {
    return this.readThrough(WebhookEndpointsController, id, req, (c, p) => c.list(p, query));
  }

  /** The public controller's answer for a read-only stand-in of the organization (every read scope, no write). */
  private async readThrough<C>(controller: Type<C>, orgId: string, req: Request, read: (c: C, principal: Principal) => Promise<unknown>): Promise<unknown> {
    if (!(await this.controls.exists(orgId))) throw notFound(`Organization ${orgId} not found`);
    auditTarget(req, { organizationId: orgId, targetType: 'organization', targetId: orgId });
    const principal: Principal = { kind: 'api_key', orgId, credentialId: 'staff', userId: null, role: null, scopes: SCOPES.filter((s) => s.endsWith(':read')) };
    return read(this.moduleRef.get(controller, { strict: false }), principal);
  }
}
