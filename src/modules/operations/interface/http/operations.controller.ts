import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString } from 'class-validator';
import type { Principal } from '../../../auth/domain/principal';
import { ANY_ROLE } from '../../../auth/domain/principal';
import { ApiAuthenticated, ApiErrors, RATE_LIMITED_RESPONSE_HEADERS } from '../../../../shared/http/openapi';
import { CurrentPrincipal, RequireAccess } from '../../../auth/interface/http/access.decorators';
import { OperationQueries } from '../../application/operation-queries';
import { OPERATION_STATUSES, OperationStatus } from '../../domain/operation';
import { presentOperation } from './operation.presenter';
import { OperationListResponse, OperationResponse } from './operations.openapi';

export class ListOperationsQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Page size', example: 20 })
  @IsOptional() @IsString({ message: 'limit must be a whole number from 1 to 100' }) limit?: string;
  @ApiPropertyOptional({ description: 'The next_cursor of the previous page' })
  @IsOptional() @IsString({ message: 'cursor must be the next_cursor of a previous page' }) cursor?: string;
  @ApiPropertyOptional({ description: 'Only the operations of this volume', example: 'vol_demodata1' })
  @IsOptional() @IsString({ message: 'volume_id must be a volume id' }) volume_id?: string;
  @ApiPropertyOptional({ enum: OPERATION_STATUSES, description: 'Only the operations in this status' })
  @IsOptional()
  @IsIn(OPERATION_STATUSES, { message: `status must be one of ${OPERATION_STATUSES.join(', ')}` })
  status?: OperationStatus;
}

@ApiTags('Operations')
@ApiAuthenticated()
@Controller('v1/operations')
export class OperationsController {
  constructor(private readonly queries: OperationQueries) {}

  /** The organization's operations, newest first; filters volume_id and status; cursor pagination. */
  @Get()
  @RequireAccess({ scope: 'vm:read', roles: ANY_ROLE })
  @ApiOperation({ operationId: 'listOperations', summary: "The organization's operations, newest first", description: 'API key scope vm:read, or any member with a session. Cursor pagination; filters volume_id and status.' })
  @ApiOkResponse({ description: 'A page of operations', type: OperationListResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'unauthorized', 'forbidden', 'rate_limited')
  async list(@CurrentPrincipal() principal: Principal, @Query() query: ListOperationsQuery) {
    const page = await this.queries.list(principal, {
      limit: query.limit,
      cursor: query.cursor,
      volumeId: query.volume_id,
      status: query.status,
    });
    return { operations: page.operations.map(presentOperation), next_cursor: page.nextCursor };
  }

  /** One operation of the organization (interface.md 4.3); 404 for an unknown id or another organization's. */
  @Get(':id')
  @RequireAccess({ scope: 'vm:read', roles: ANY_ROLE })
  @ApiOperation({ operationId: 'getOperation', summary: 'One operation: poll it until succeeded or failed', description: 'API key scope vm:read, or any member with a session.' })
  @ApiParam({ name: 'id', description: 'Operation id', example: 'op_8fKq2LmX9vR4tW7yZ3bN5cHd' })
  @ApiOkResponse({ description: 'The operation', type: OperationResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('unauthorized', 'forbidden', 'not_found', 'rate_limited')
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return presentOperation(await this.queries.get(principal, id));
  }
}
