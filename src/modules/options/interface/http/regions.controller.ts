import { Controller, Get } from '@nestjs/common';
import { ANY_ROLE } from '../../../auth/domain/principal';
import { RequireAccess } from '../../../auth/interface/http/access.decorators';
import { ListRegions } from '../../application/list-regions.use-case';
import { presentRegion } from './volume-options.presenter';

@Controller('v1/regions')
export class RegionsController {
  constructor(private readonly listRegions: ListRegions) {}

  /** Every region with its zones, by id. */
  @Get()
  @RequireAccess({ scope: 'vm:read', roles: ANY_ROLE })
  async list() {
    const regions = await this.listRegions.execute();
    return { regions: regions.map(presentRegion) };
  }
}
