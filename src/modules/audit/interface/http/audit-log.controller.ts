import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiAuthenticated, ApiErrors, RATE_LIMITED_RESPONSE_HEADERS } from '../../../../shared/http/openapi';
import { ADMIN_ROLES } from '../../../auth/domain/principal';
import type { Principal } from '../../../auth/domain/principal';
import { CurrentPrincipal, RequireAccess } from '../../../auth/interface/http/access.decorators';
import { ListAuditLog } from '../../application/list-audit-log.use-case';
import { AuditLogEntry } from '../../domain/audit-log';
import { AuditEntryResponse, AuditLogPageResponse, AuditLogQueryDto } from './audit-log.openapi';

export function presentAuditEntry(e: AuditLogEntry): AuditEntryResponse {
  return {
    id: e.id,
    created_at: e.createdAt.toISOString(),
    action: e.action,
    actor: e.actor,
    target: e.target,
    ip: e.ip,
    request_id: e.requestId,
    client_request_id: e.clientRequestId,
    data: e.data,
  };
}

@ApiTags('Audit log')
@ApiAuthenticated()
@Controller('v1/audit-log')
export class AuditLogController {
  constructor(private readonly listAuditLog: ListAuditLog) {}

  @Get()
  @RequireAccess({ scope: 'audit:read', roles: ADMIN_ROLES })
  @ApiOperation({ operationId: 'listAuditLog',
    summary: "The organization's audit log, newest first",
    description:
      'Sessions of admins and owners; API keys holding audit:read (a security tool pulling the log). Sign-ins, API key and member changes, renewals, wallet credits and more, each with the actor and IP. ' +
      'Filters: action (exact or a prefix such as volume.*), actor_id, target_id, since, until. Cursor pagination (limit 1-100, default 50) that never repeats or skips an entry while new ones are written.',
  })
  @ApiOkResponse({ type: AuditLogPageResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'unauthorized', 'forbidden', 'rate_limited')
  async list(@CurrentPrincipal() principal: Principal, @Query() query: AuditLogQueryDto): Promise<AuditLogPageResponse> {
    const page = await this.listAuditLog.execute(principal, query);
    return { entries: page.entries.map(presentAuditEntry), next_cursor: page.nextCursor };
  }
}
