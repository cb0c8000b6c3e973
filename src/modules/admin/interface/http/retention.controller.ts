import { Body, Controller, Param, Post, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { Allow } from 'class-validator';
import type { Request, Response } from 'express';
import { IdempotentExecution } from '../../../idempotency/application/idempotent-execution';
import { jsonResponse, sendOutcome, storableErrors } from '../../../idempotency/interface/http/idempotent-request';
import { presentServer } from '../../../servers/domain/server-json';
import { ExtendRetention } from '../../../terms/application/extend-retention.use-case';
import { presentVolume } from '../../../volumes/domain/volume-json';
import { OPERATOR, StaffPrincipal } from '../../domain/staff';
import { adminIdempotencyScope } from './admin-idempotency';
import { AdminController, AdminRoute, CurrentStaff, auditChanges, auditTarget } from './admin.decorators';

export class ExtendRetentionDto {
  @ApiProperty({ type: String, format: 'date-time', description: 'The new release_at: later than the current one, at most 90 days after suspended_at', example: '2026-12-31T00:00:00Z' })
  @Allow() until: string;
  @ApiProperty({ minLength: 1, maxLength: 500, description: "Why: kept in the customer's audit log", example: 'Customer is renewing after a bank transfer (SUP-77)' })
  @Allow() reason: string;
}

const DESCRIPTION =
  "Operator. Moves a suspended resource's release_at later, at most 90 days after its suspension (400 naming until otherwise, or when until is not later " +
  'than the current release_at); not suspended: 409 invalid_state. The term sweep releases it at the new time. The customer sees the change in their audit log ' +
  '(actor staff, with the reason and the justification). Answers the resource in its public shape.';

/** Terms for operators (admin.md "Terms and operations"): the retention extension, owned by the terms module. */
@ApiTags('Terms')
@AdminController()
@Controller('admin/v1')
export class AdminRetentionController {
  constructor(
    private readonly extend: ExtendRetention,
    private readonly idempotent: IdempotentExecution,
  ) {}

  @Post('servers/:id/extend-retention')
  @AdminRoute({ roles: OPERATOR, justification: true })
  @ApiOperation({ operationId: 'extendServerRetention', summary: "Move a suspended server's release later", description: DESCRIPTION })
  async server(@Param('id') id: string, @Body() body: ExtendRetentionDto, @CurrentStaff() staff: StaffPrincipal & { justification: string | null }, @Req() req: Request, @Res() res: Response): Promise<void> {
    await this.run('server', id, body, staff, req, res);
  }

  @Post('volumes/:id/extend-retention')
  @AdminRoute({ roles: OPERATOR, justification: true })
  @ApiOperation({ operationId: 'extendVolumeRetention', summary: "Move a suspended volume's release later", description: DESCRIPTION })
  async volume(@Param('id') id: string, @Body() body: ExtendRetentionDto, @CurrentStaff() staff: StaffPrincipal & { justification: string | null }, @Req() req: Request, @Res() res: Response): Promise<void> {
    await this.run('volume', id, body, staff, req, res);
  }

  private async run(kind: 'server' | 'volume', id: string, body: ExtendRetentionDto, staff: StaffPrincipal & { justification: string | null }, req: Request, res: Response): Promise<void> {
    const outcome = await this.idempotent.run(
      adminIdempotencyScope(req),
      async () => {
        const done = await this.extend.execute(kind, id, { until: body.until, reason: body.reason }, { role: staff.role, justification: staff.justification });
        auditTarget(req, { organizationId: done.orgId, targetType: kind, targetId: id });
        auditChanges(req, { before: { release_at: done.before.toISOString() }, after: { release_at: done.after.toISOString() } });
        return jsonResponse(200, done.kind === 'server' ? { server: presentServer(done.server) } : { volume: presentVolume(done.volume) });
      },
      storableErrors(req, ['not_found', 'invalid_state']),
    );
    sendOutcome(res, outcome);
  }
}
