import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { IdempotentExecution } from '../../../idempotency/application/idempotent-execution';
import { jsonResponse, noContentResponse, sendOutcome, storableErrors } from '../../../idempotency/interface/http/idempotent-request';
import { StaffAccounts } from '../../application/staff.use-cases';
import { SUPERADMIN, presentStaff, presentStaffToken } from '../../domain/staff';
import { adminIdempotencyScope } from './admin-idempotency';
import { AdminController, AdminRoute, auditTarget } from './admin.decorators';
import { decodeCursor, encodeCursor, idParam, instant, pageLimit } from './admin-query';
import { CreateStaffDto, CreateStaffTokenDto, StaffAuditQuery, UpdateStaffDto } from './staff.dto';

@ApiTags('Staff')
@AdminController()
@Controller('admin/v1')
export class StaffController {
  constructor(
    private readonly accounts: StaffAccounts,
    private readonly idempotent: IdempotentExecution,
  ) {}

  @Post('staff')
  @AdminRoute({ roles: SUPERADMIN })
  @ApiOperation({ operationId: 'createStaff', summary: 'Create a staff member; the answer holds its first token, shown once' })
  async create(@Body() body: CreateStaffDto, @Req() req: Request, @Res() res: Response): Promise<void> {
    const outcome = await this.idempotent.run(
      adminIdempotencyScope(req),
      async () => {
        const { staff, token, tokenRecord } = await this.accounts.create({ email: body.email, name: body.name, role: body.role, expiresAt: body.expires_at });
        auditTarget(req, { targetType: 'staff', targetId: staff.id });
        return jsonResponse(201, { staff: presentStaff(staff), token, staff_token: presentStaffToken(tokenRecord) });
      },
      storableErrors(req, ['conflict']),
      { seal: true },
    );
    res.setHeader('Cache-Control', 'no-store');
    sendOutcome(res, outcome);
  }

  @Get('staff')
  @AdminRoute({ roles: SUPERADMIN })
  @ApiOperation({ operationId: 'listStaff', summary: 'Every staff member, disabled ones included' })
  async list(): Promise<unknown> {
    return { staff: (await this.accounts.list()).map(presentStaff) };
  }

  @Get('staff/:id')
  @AdminRoute({ roles: SUPERADMIN })
  @ApiOperation({ operationId: 'getStaff', summary: 'A staff member and their tokens (never a token itself)' })
  async get(@Param('id') id: string): Promise<unknown> {
    const staff = await this.accounts.get(id);
    return { staff: presentStaff(staff), tokens: (await this.accounts.listTokens(id)).map(presentStaffToken) };
  }

  @Patch('staff/:id')
  @AdminRoute({ roles: SUPERADMIN })
  @ApiOperation({ operationId: 'updateStaff', summary: "Change a staff member's role (in force within 1 s on every process)" })
  async update(@Param('id') id: string, @Body() body: UpdateStaffDto, @Req() req: Request, @Res() res: Response): Promise<void> {
    const outcome = await this.idempotent.run(adminIdempotencyScope(req), async () => jsonResponse(200, { staff: presentStaff(await this.accounts.setRole(id, body.role)) }), storableErrors(req, ['not_found']));
    sendOutcome(res, outcome);
  }

  @Delete('staff/:id')
  @AdminRoute({ roles: SUPERADMIN })
  @ApiOperation({ operationId: 'disableStaff', summary: 'Disable a staff member: every token refused within 1 s on every process' })
  async disable(@Param('id') id: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    const outcome = await this.idempotent.run(adminIdempotencyScope(req), async () => jsonResponse(200, { staff: presentStaff(await this.accounts.disable(id)) }), storableErrors(req, ['not_found']));
    sendOutcome(res, outcome);
  }

  @Post('staff/:id/tokens')
  @AdminRoute({ roles: SUPERADMIN })
  @ApiOperation({ operationId: 'createStaffToken', summary: 'A new token for a staff member (at most 90 days), shown once' })
  async createToken(@Param('id') id: string, @Body() body: CreateStaffTokenDto, @Req() req: Request, @Res() res: Response): Promise<void> {
    const outcome = await this.idempotent.run(
      adminIdempotencyScope(req),
      async () => {
        const { token, record } = await this.accounts.createToken(id, body.expires_at);
        return jsonResponse(201, { token, staff_token: presentStaffToken(record) });
      },
      storableErrors(req, ['not_found', 'invalid_state']),
      { seal: true },
    );
    res.setHeader('Cache-Control', 'no-store');
    sendOutcome(res, outcome);
  }

  @Delete('staff/:id/tokens/:tokenId')
  @HttpCode(204)
  @AdminRoute({ roles: SUPERADMIN })
  @ApiOperation({ operationId: 'revokeStaffToken', summary: 'Revoke a staff token (refused within 1 s on every process)' })
  async revokeToken(@Param('id') id: string, @Param('tokenId') tokenId: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    const outcome = await this.idempotent.run(
      adminIdempotencyScope(req),
      async () => {
        await this.accounts.revokeToken(id, tokenId);
        return noContentResponse();
      },
      storableErrors(req, ['not_found']),
    );
    sendOutcome(res, outcome);
  }

  @Get('staff-audit')
  @AdminRoute({ roles: SUPERADMIN })
  @ApiOperation({ operationId: 'listStaffAudit', summary: 'The staff audit: one row per admin request, newest first; filters staff_id, organization_id, since, until' })
  async audit(@Query() query: StaffAuditQuery): Promise<unknown> {
    const limit = pageLimit(query.limit);
    const before = decodeCursor('sa1', query.cursor, /^[1-9]\d{0,18}$/);
    const page = await this.accounts.auditLog(
      { staffId: idParam(query.staff_id, 'staff_id'), organizationId: idParam(query.organization_id, 'organization_id'), since: instant(query.since, 'since'), until: instant(query.until, 'until') },
      limit,
      before,
    );
    return {
      entries: page.items.map((e) => ({
        id: e.id, staff_id: e.staffId, role: e.role, method: e.method, route: e.route, organization_id: e.organizationId, target_type: e.targetType, target_id: e.targetId,
        justification: e.justification, request_id: e.requestId, ip: e.ip, status: e.status, created_at: e.createdAt.toISOString(),
        changes: e.changes ?? null,
      })),
      next_cursor: page.next && encodeCursor('sa1', page.next),
    };
  }
}
