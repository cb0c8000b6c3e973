import { Body, Controller, Get, Param, Patch, Post, Query, Req, Res } from '@nestjs/common';
import { ApiAcceptedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { Principal } from '../../../auth/domain/principal';
import { ANY_ROLE, WRITER_ROLES } from '../../../auth/domain/principal';
import { ApiAuthenticated, ApiErrors, ApiIdempotencyKey, RATE_LIMITED_RESPONSE_HEADERS } from '../../../../shared/http/openapi';
import { ClientIp, CurrentPrincipal, RequireAccess } from '../../../auth/interface/http/access.decorators';
import { IdempotentExecution } from '../../../idempotency/application/idempotent-execution';
import { STORED_ERROR_STATUSES, idempotencyScope, jsonResponse, sendOutcome, storableErrors } from '../../../idempotency/interface/http/idempotent-request';
import { presentOperation } from '../../../operations/interface/http/operation.presenter';
import { RenewVolume } from '../../application/renew-volume.use-case';
import { UpdateVolume } from '../../application/update-volume.use-case';
import { VolumeQueries } from '../../application/volume-queries';
import { presentVolume } from './volume.presenter';
import { ListVolumesQuery, RenewVolumeBody, UpdateVolumeBody } from './volumes.dto';
import { RenewVolumeResponse, VolumeListResponse, VolumeResponse } from './volumes.openapi';

@ApiTags('Volumes')
@ApiAuthenticated()
@Controller('v1/volumes')
export class VolumesController {
  constructor(
    private readonly queries: VolumeQueries,
    private readonly renewVolume: RenewVolume,
    private readonly updateVolume: UpdateVolume,
    private readonly idempotent: IdempotentExecution,
  ) {}

  /** The organization's volumes (not deleted, unless status=deleted), newest first; filters; cursor pagination. */
  @Get()
  @RequireAccess({ scope: 'vm:read', roles: ANY_ROLE })
  @ApiOperation({
    operationId: 'listVolumes',
    summary: "The organization's volumes, newest first, filtered",
    description:
      'API key scope vm:read, or any member with a session. Cursor pagination. Without `status` every volume that is not deleted; ' +
      '`status=deleted` the deleted ones. Every filter given must match; a bad value is 400 naming the parameter.',
  })
  @ApiOkResponse({ description: 'A page of volumes', type: VolumeListResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'unauthorized', 'forbidden', 'rate_limited')
  async list(@CurrentPrincipal() principal: Principal, @Query() query: ListVolumesQuery) {
    const page = await this.queries.list(principal, {
      limit: query.limit,
      cursor: query.cursor,
      region: query.region,
      zone: query.zone,
      type: query.type,
      status: query.status,
      serverId: query.server_id,
      name: query.name,
      label: query.label,
      expiresBefore: query.expires_before,
    });
    return { volumes: page.volumes.map(presentVolume), next_cursor: page.nextCursor };
  }

  /** One volume of the organization (deleted ones too, with deleted_at); 404 otherwise. */
  @Get(':id')
  @RequireAccess({ scope: 'vm:read', roles: ANY_ROLE })
  @ApiOperation({ operationId: 'getVolume', summary: 'One volume of the organization (deleted ones too, with deleted_at)', description: 'API key scope vm:read, or any member with a session.' })
  @ApiParam({ name: 'id', description: 'Volume id', example: 'vol_demodata1' })
  @ApiOkResponse({ description: 'The volume', type: VolumeResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('unauthorized', 'forbidden', 'not_found', 'rate_limited')
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return presentVolume(await this.queries.get(principal, id));
  }

  /**
   * lifecycle.md: PATCH {name?, note?, labels?, delete_protection?} → 200 with the Volume.
   * Naturally idempotent (the same body leaves the same volume), so no Idempotency-Key.
   */
  @Patch(':id')
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({ operationId: 'updateVolume',
    summary: "Change a disk's name, note, labels or delete protection",
    description:
      'API key scope vm:write, or a developer, admin or owner with a session. Synchronous: answers 200 with the volume. Members left out ' +
      'are unchanged; `labels` replaces the whole map; `note: null` clears the note. Turning `delete_protection` off takes an admin or ' +
      'owner session or an API key (a developer session gets 403). Errors in this order: 400 (the first bad member, named in ' +
      'details.field), 404, 409 invalid_state (deleted volume), 403 (protection off by a developer), 409 conflict (name taken). ' +
      'Idempotency-Key is not used: sending the same body again leaves the same volume and writes no second audit row.',
  })
  @ApiParam({ name: 'id', description: 'Volume id', example: 'vol_demodata1' })
  @ApiOkResponse({ type: VolumeResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'rate_limited', 'not_found', 'invalid_state', 'conflict')
  async update(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    @Body() body: UpdateVolumeBody,
    @ClientIp() ip: string | null,
  ) {
    const volume = await this.updateVolume.execute(
      principal,
      { volumeId: id, name: body.name, note: body.note, labels: body.labels, deleteProtection: body.delete_protection },
      ip,
    );
    return presentVolume(volume);
  }

  /**
   * interface.md 4.1: 202 {volume, operation} with Location of the operation. With an
   * Idempotency-Key the answer (202, 402, 404, 409 invalid_state) is stored and replayed.
   */
  @Post(':id/renew')
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'renewVolume',
    summary: 'Renew a disk by a term, at the price it was bought at, paid from the wallet',
    description:
      'API key scope vm:write, or a developer, admin or owner with a session. Reserves the price and answers 202 with the volume ' +
      'and a volume.renew operation to poll. Errors in this order: 400, 409 idempotency_conflict, 404, 409 invalid_state, 402.',
  })
  @ApiParam({ name: 'id', description: 'Volume id', example: 'vol_demodata1' })
  @ApiIdempotencyKey([202, ...STORED_ERROR_STATUSES])
  @ApiAcceptedResponse({
    description: 'Renewal accepted: the price is reserved; poll the operation',
    type: RenewVolumeResponse,
    headers: {
      ...RATE_LIMITED_RESPONSE_HEADERS,
      Location: { required: true, description: 'The operation to poll: /v1/operations/{op_id}', schema: { type: 'string', example: '/v1/operations/op_8fKq2LmX9vR4tW7yZ3bN5cHd' } },
    },
  })
  @ApiErrors('invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'rate_limited', 'idempotency_conflict', 'not_found', 'invalid_state', 'insufficient_balance')
  async renew(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    @Body() body: RenewVolumeBody,
    @ClientIp() ip: string | null,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const scope = idempotencyScope(req, principal.orgId);
    const outcome = await this.idempotent.run(
      scope,
      async () => {
        const { volume, operation } = await this.renewVolume.execute(
          principal,
          { volumeId: id, termMonths: body.term_months, currency: body.currency },
          ip,
        );
        return jsonResponse(
          202,
          { volume: presentVolume(volume), operation: presentOperation(operation) },
          { Location: `/v1/operations/${operation.id}` },
        );
      },
      storableErrors(req),
    );
    sendOutcome(res, outcome);
  }
}
