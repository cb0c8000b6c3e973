import { Body, Controller, Get, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Principal } from '../../../auth/domain/principal';
import { ANY_ROLE, WRITER_ROLES } from '../../../auth/domain/principal';
import { ClientIp, CurrentPrincipal, RequireAccess } from '../../../auth/interface/http/access.decorators';
import { IdempotentExecution } from '../../../idempotency/application/idempotent-execution';
import { idempotencyScope, jsonResponse, sendOutcome, storableErrors } from '../../../idempotency/interface/http/idempotent-request';
import { presentOperation } from '../../../operations/interface/http/operation.presenter';
import { RenewVolume } from '../../application/renew-volume.use-case';
import { VolumeQueries } from '../../application/volume-queries';
import { presentVolume } from './volume.presenter';
import { ListVolumesQuery, RenewVolumeBody } from './volumes.dto';

@Controller('v1/volumes')
export class VolumesController {
  constructor(
    private readonly queries: VolumeQueries,
    private readonly renewVolume: RenewVolume,
    private readonly idempotent: IdempotentExecution,
  ) {}

  /** The organization's volumes that are not deleted, newest first; cursor pagination. */
  @Get()
  @RequireAccess({ scope: 'vm:read', roles: ANY_ROLE })
  async list(@CurrentPrincipal() principal: Principal, @Query() query: ListVolumesQuery) {
    const page = await this.queries.list(principal, { limit: query.limit, cursor: query.cursor });
    return { volumes: page.volumes.map(presentVolume), next_cursor: page.nextCursor };
  }

  /** One volume of the organization (deleted ones too, with deleted_at); 404 otherwise. */
  @Get(':id')
  @RequireAccess({ scope: 'vm:read', roles: ANY_ROLE })
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return presentVolume(await this.queries.get(principal, id));
  }

  /**
   * interface.md 4.1: 202 {volume, operation} with Location of the operation. With an
   * Idempotency-Key the answer (202, 402, 404, 409 invalid_state) is stored and replayed.
   */
  @Post(':id/renew')
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
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
