import { Controller, Get, Param, Query } from '@nestjs/common';
import { IsIn, IsOptional, IsString } from 'class-validator';
import type { Principal } from '../../../auth/domain/principal';
import { ANY_ROLE } from '../../../auth/domain/principal';
import { CurrentPrincipal, RequireAccess } from '../../../auth/interface/http/access.decorators';
import { OperationQueries } from '../../application/operation-queries';
import { OPERATION_STATUSES, OperationStatus } from '../../domain/operation';
import { presentOperation } from './operation.presenter';

export class ListOperationsQuery {
  @IsOptional() @IsString({ message: 'limit must be a whole number from 1 to 100' }) limit?: string;
  @IsOptional() @IsString({ message: 'cursor must be the next_cursor of a previous page' }) cursor?: string;
  @IsOptional() @IsString({ message: 'volume_id must be a volume id' }) volume_id?: string;
  @IsOptional()
  @IsIn(OPERATION_STATUSES, { message: `status must be one of ${OPERATION_STATUSES.join(', ')}` })
  status?: OperationStatus;
}

@Controller('v1/operations')
export class OperationsController {
  constructor(private readonly queries: OperationQueries) {}

  /** The organization's operations, newest first; filters volume_id and status; cursor pagination. */
  @Get()
  @RequireAccess({ scope: 'vm:read', roles: ANY_ROLE })
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
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return presentOperation(await this.queries.get(principal, id));
  }
}
