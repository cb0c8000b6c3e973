import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiAuthenticated, ApiErrors, RATE_LIMITED_RESPONSE_HEADERS } from '../../../../shared/http/openapi';
import type { Principal } from '../../../auth/domain/principal';
import { ANY_ROLE } from '../../../auth/domain/principal';
import { CurrentPrincipal, RequireAccess } from '../../../auth/interface/http/access.decorators';
import { GetVolumeOptions } from '../../application/get-volume-options.use-case';
import { VolumeOptionsResponse } from './options.openapi';
import { VolumeOptionsQuery } from './volume-options.dto';
import { presentVolumeOptions } from './volume-options.presenter';

@ApiTags('Volume options')
@Controller('v1/volume-options')
export class VolumeOptionsController {
  constructor(private readonly getOptions: GetVolumeOptions) {}

  /** Sizes, terms, prices, stock and zones (with the caller's servers that can take a disk) of one region and type. */
  @Get()
  @RequireAccess({ scope: 'vm:read', roles: ANY_ROLE })
  @ApiAuthenticated()
  @ApiOperation({
    operationId: 'getVolumeOptions',
    summary: 'Disk sizes, terms, prices, stock and zones buyable in one region',
    description: 'API key scope vm:read, or any member with a session. A missing region, an unknown region (details.valid lists the region ids) or an unknown type: 400; a region selling no disk of the type: 404.',
  })
  @ApiOkResponse({ description: 'The options of the region and type', type: VolumeOptionsResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'unauthorized', 'forbidden', 'not_found', 'rate_limited')
  async get(@CurrentPrincipal() principal: Principal, @Query() query: VolumeOptionsQuery) {
    const options = await this.getOptions.execute(principal.orgId, { region: query.region, type: query.type ?? 'premium' });
    return presentVolumeOptions(options);
  }
}
