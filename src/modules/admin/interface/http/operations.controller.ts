import { Controller, Get, Query } from '@nestjs/common';
import { ApiOperation, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { IsOptional, IsString } from 'class-validator';
import { Db } from '../../../../shared/database/transaction';
import { Clock } from '../../../../shared/kernel/clock/clock';
import { invalidRequest } from '../../../../shared/kernel/errors/domain-error';
import { VerifyInvariants } from '../../../verification/application/verify-invariants.use-case';
import { ALL_STAFF, OPERATOR } from '../../domain/staff';
import { AdminController, AdminRoute } from './admin.decorators';
import { decodeCursor, encodeCursor, idParam, pageLimit } from './admin-query';

export class AdminOperationsQuery {
  @ApiPropertyOptional({ enum: ['pending', 'running', 'succeeded', 'failed'] }) @IsOptional() @IsString({ message: 'status must be a string' }) status?: string;
  @ApiPropertyOptional({ example: 'vm.create' }) @IsOptional() @IsString({ message: 'type must be a string' }) type?: string;
  @ApiPropertyOptional({ type: 'integer', description: 'Only operations created at least this many seconds ago' }) @IsOptional() @IsString({ message: 'older_than_s must be a whole number of seconds' }) older_than_s?: string;
  @ApiPropertyOptional() @IsOptional() @IsString({ message: 'organization_id must be a string' }) organization_id?: string;
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, default: 50 }) @IsOptional() @IsString({ message: 'limit must be a whole number from 1 to 100' }) limit?: string;
  @ApiPropertyOptional() @IsOptional() @IsString({ message: 'cursor must be the next_cursor of a previous page' }) cursor?: string;
}

const STATUSES = ['pending', 'running', 'succeeded', 'failed'];

/** Operations across organizations (triage of stuck or failed ones) and the invariants' report, for operators. */
@ApiTags('Operations')
@AdminController()
@Controller('admin/v1')
export class AdminOperationsController {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly verify: VerifyInvariants,
  ) {}

  @Get('operations')
  @AdminRoute({ roles: ALL_STAFF })
  @ApiOperation({ operationId: 'listAllOperations', summary: 'Operations of every organization, newest first; filters status, type, older_than_s, organization_id' })
  async operations(@Query() query: AdminOperationsQuery): Promise<unknown> {
    const limit = pageLimit(query.limit);
    const params: unknown[] = [];
    const where: string[] = [];
    const add = (sql: (p: string) => string, value: unknown) => {
      params.push(value);
      where.push(sql(`$${params.length}`));
    };
    if (query.status !== undefined) {
      if (!STATUSES.includes(query.status)) throw invalidRequest(`status must be one of ${STATUSES.join(', ')}`, { field: 'status' });
      add((p) => `status = ${p}`, query.status);
    }
    if (query.type !== undefined) {
      if (!/^[a-z_]+\.[a-z_]+$/.test(query.type)) throw invalidRequest('type must be an operation type such as vm.create', { field: 'type' });
      add((p) => `type = ${p}`, query.type);
    }
    if (query.older_than_s !== undefined) {
      if (!/^\d{1,9}$/.test(query.older_than_s)) throw invalidRequest('older_than_s must be a whole number of seconds', { field: 'older_than_s' });
      add((p) => `created_at <= ${p}`, new Date(this.clock.now().getTime() - Number(query.older_than_s) * 1000));
    }
    const org = idParam(query.organization_id, 'organization_id');
    if (org !== undefined) add((p) => `org_id = ${p}`, org);
    const cursor = decodeCursor('op1', query.cursor, /^\d{4}-[^|]+\|op_[A-Za-z0-9]+$/);
    if (cursor !== undefined) {
      const [at, id] = cursor.split('|');
      params.push(new Date(at), id);
      where.push(`(created_at, id) < ($${params.length - 1}, $${params.length})`);
    }
    params.push(limit + 1);
    const rows = await this.db.query<{ id: string; org_id: string; type: string; status: string; created_at: Date; finished_at: Date | null; error: unknown }>(
      `SELECT id, org_id, type, status, created_at, finished_at, error FROM operations ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
        ORDER BY created_at DESC, id DESC LIMIT $${params.length}`,
      params,
    );
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      operations: page.map((r) => ({
        id: r.id, organization_id: r.org_id, type: r.type, status: r.status, created_at: r.created_at.toISOString(), finished_at: r.finished_at && r.finished_at.toISOString(), error: r.error ?? null,
      })),
      next_cursor: rows.length > limit && last ? encodeCursor('op1', `${last.created_at.toISOString()}|${last.id}`) : null,
    };
  }

  @Get('verify')
  @AdminRoute({ roles: OPERATOR })
  @ApiOperation({ operationId: 'verifyInvariants', summary: "The `cli verify` report as JSON (read-only, one snapshot)" })
  async verifyReport(): Promise<unknown> {
    return this.verify.execute();
  }
}
