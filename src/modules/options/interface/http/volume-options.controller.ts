import { Controller, Get, Query } from '@nestjs/common';
import type { Principal } from '../../../auth/domain/principal';
import { ANY_ROLE } from '../../../auth/domain/principal';
import { CurrentPrincipal, RequireAccess } from '../../../auth/interface/http/access.decorators';
import { GetVolumeOptions } from '../../application/get-volume-options.use-case';
import { VolumeOptionsQuery } from './volume-options.dto';
import { presentVolumeOptions } from './volume-options.presenter';

@Controller('v1/volume-options')
export class VolumeOptionsController {
  constructor(private readonly getOptions: GetVolumeOptions) {}

  /** Sizes, terms, prices, stock and zones (with the caller's servers that can take a disk) of one region and type. */
  @Get()
  @RequireAccess({ scope: 'vm:read', roles: ANY_ROLE })
  async get(@CurrentPrincipal() principal: Principal, @Query() query: VolumeOptionsQuery) {
    const options = await this.getOptions.execute(principal.orgId, { region: query.region, type: query.type ?? 'premium' });
    return presentVolumeOptions(options);
  }
}
