import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiAuthenticated, ApiErrors, RATE_LIMITED_RESPONSE_HEADERS } from '../../../../shared/http/openapi';
import { ANY_ROLE } from '../../../auth/domain/principal';
import { RequireAccess } from '../../../auth/interface/http/access.decorators';
import { ListRegions } from '../../application/list-regions.use-case';
import { RegionsResponse } from './options.openapi';
import { presentRegion } from './volume-options.presenter';

@ApiTags('Regions')
@Controller('v1/regions')
export class RegionsController {
  constructor(private readonly listRegions: ListRegions) {}

  /** Every region with its zones, by id. */
  @Get()
  @RequireAccess({ scope: 'vm:read', roles: ANY_ROLE })
  @ApiAuthenticated()
  @ApiOperation({ operationId: 'listRegions', summary: 'Every region with its zones', description: 'API key scope vm:read, or any member with a session.' })
  @ApiOkResponse({ description: 'The regions', type: RegionsResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('unauthorized', 'forbidden', 'rate_limited')
  async list() {
    const regions = await this.listRegions.execute();
    return { regions: regions.map(presentRegion) };
  }
}
