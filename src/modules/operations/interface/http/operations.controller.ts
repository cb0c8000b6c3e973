import { Controller, Get, Param, Query, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Matches } from 'class-validator';
import type { Request, Response } from 'express';
import type { Principal } from '../../../auth/domain/principal';
import { ANY_ROLE } from '../../../auth/domain/principal';
import { ApiAuthenticated, ApiConditionalGet, ApiErrors, RATE_LIMITED_RESPONSE_HEADERS } from '../../../../shared/http/openapi';
import { CurrentPrincipal, RequireAccess } from '../../../auth/interface/http/access.decorators';
import { OperationQueries } from '../../application/operation-queries';
import { OPERATION_STATUSES, OperationStatus } from '../../domain/operation';
import { etagMatches, operationEtag, presentOperation } from './operation.presenter';
import { OperationListResponse, OperationResponse } from './operations.openapi';

export class ListOperationsQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Page size', example: 20 })
  @IsOptional() @IsString({ message: 'limit must be a whole number from 1 to 100' }) limit?: string;
  @ApiPropertyOptional({ description: 'The next_cursor of the previous page' })
  @IsOptional() @IsString({ message: 'cursor must be the next_cursor of a previous page' }) cursor?: string;
  @ApiPropertyOptional({ description: 'Only the operations of this volume', example: 'vol_demodata1' })
  @IsOptional() @IsString({ message: 'volume_id must be a volume id' }) volume_id?: string;
  @ApiPropertyOptional({ description: 'Only the operations naming this server (vm.*, template.*, and volume operations on its disks)', example: 'vm_demoweb1' })
  @IsOptional() @IsString({ message: 'vm_id must be a server id, given once' }) vm_id?: string;
  @ApiPropertyOptional({ description: 'Only the operations of this deployment (template.*)', example: 'dep_4Lm9xQ2vR7tW1yZ3bN5cHd8K' })
  @IsOptional() @IsString({ message: 'deployment_id must be a deployment id, given once' }) deployment_id?: string;
  @ApiPropertyOptional({ enum: OPERATION_STATUSES, description: 'Only the operations in this status' })
  @IsOptional()
  @IsIn(OPERATION_STATUSES, { message: `status must be one of ${OPERATION_STATUSES.join(', ')}` })
  status?: OperationStatus;
}

export class GetOperationQuery {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: 60,
    description:
      'Long-poll (as AIP-151 WaitOperation): answer as soon as the operation is succeeded or failed, or with its current state ' +
      'after this many seconds. An operation that has ended answers at once. Without it the answer is immediate.',
    example: 30,
  })
  @IsOptional()
  @IsString({ message: 'wait must be a whole number of seconds from 1 to 60' })
  @Matches(/^0*([1-9]|[1-5][0-9]|60)$/, { message: 'wait must be a whole number of seconds from 1 to 60' })
  wait?: string;
}

@ApiTags('Operations')
@ApiAuthenticated()
@Controller('v1/operations')
export class OperationsController {
  constructor(private readonly queries: OperationQueries) {}

  /** The organization's operations, newest first; filters volume_id, deployment_id and status; cursor pagination. */
  @Get()
  @RequireAccess({ scope: 'vm:read', roles: ANY_ROLE })
  @ApiOperation({ operationId: 'listOperations', summary: "The organization's operations, newest first", description: 'API key scope vm:read, or any member with a session. Cursor pagination; filters volume_id, vm_id, deployment_id and status.' })
  @ApiOkResponse({ description: 'A page of operations', type: OperationListResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'unauthorized', 'forbidden', 'rate_limited')
  async list(@CurrentPrincipal() principal: Principal, @Query() query: ListOperationsQuery) {
    const page = await this.queries.list(principal, {
      limit: query.limit,
      cursor: query.cursor,
      volumeId: query.volume_id,
      vmId: query.vm_id,
      deploymentId: query.deployment_id,
      status: query.status,
    });
    return { operations: page.operations.map(presentOperation), next_cursor: page.nextCursor };
  }

  /**
   * One operation of the organization (interface.md 4.3); 404 for an unknown id or another
   * organization's. `wait` long-polls (lifecycle.md "Operations: long-poll and ETag"); every
   * answer carries an ETag, and If-None-Match with the current one answers 304 with no body.
   */
  @Get(':id')
  @RequireAccess({ scope: 'vm:read', roles: ANY_ROLE })
  @ApiOperation({
    operationId: 'getOperation',
    summary: 'One operation: wait for it (?wait=seconds) or poll it until succeeded or failed',
    description:
      'API key scope vm:read, or any member with a session. With `wait` (1-60 seconds) the request is held until the operation ' +
      'ends (answered within moments of it), or answers its current state when the time is up; a server shutting down answers ' +
      'held requests at once. Every answer carries an ETag of the representation; If-None-Match with it answers 304 with no body ' +
      '(counted by the rate limit like any request). With both, the wait comes first, then the comparison.',
  })
  @ApiParam({ name: 'id', description: 'Operation id', example: 'op_8fKq2LmX9vR4tW7yZ3bN5cHd' })
  @ApiConditionalGet()
  @ApiOkResponse({ description: 'The operation', type: OperationResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'unauthorized', 'forbidden', 'not_found', 'rate_limited')
  async get(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    @Query() query: GetOperationQuery,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    // A client that goes away ends its wait.
    const gone = new AbortController();
    const onClose = (): void => gone.abort();
    res.once('close', onClose);
    try {
      const operation =
        query.wait === undefined ? await this.queries.get(principal, id) : await this.queries.wait(principal, id, Number(query.wait) * 1000, gone.signal);
      // Serialized once: the ETag is the digest of the very bytes sent.
      const json = JSON.stringify(presentOperation(operation));
      const etag = operationEtag(json);
      res.setHeader('ETag', etag);
      if (etagMatches(req.headers['if-none-match'], etag)) {
        res.status(304).end();
        return;
      }
      res.status(200).type('application/json').send(json);
    } finally {
      res.off('close', onClose);
    }
  }
}
