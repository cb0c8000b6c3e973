import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { IsDefined, IsNotEmpty, IsString } from 'class-validator';
import { ApiAuthenticated, ApiErrors, RATE_LIMITED_RESPONSE_HEADERS } from '../../../../shared/http/openapi';
import { formatPricePair } from '../../../../shared/kernel/money/money';
import { ANY_ROLE } from '../../../auth/domain/principal';
import { RequireAccess } from '../../../auth/interface/http/access.decorators';
import { GetServerOptions } from '../../application/get-server-options.use-case';
import { ServerOptions } from '../../domain/server-options';
import { ServerOptionsResponse } from './server-options.openapi';

/** Query of GET /v1/server-options. Unknown parameters are ignored. */
export class ServerOptionsQuery {
  @ApiProperty({ description: 'A region id from GET /v1/regions', example: 'id-jkt' })
  @IsDefined({ message: 'region is required' })
  @IsString({ message: 'region must be a single string' })
  @IsNotEmpty({ message: 'region is required' })
  region: string;
}

/** The Server options object of servers.md, every member present. */
export function presentServerOptions(o: ServerOptions) {
  return {
    region: o.region,
    in_stock: o.inStock,
    purchases_paused: o.purchasesPaused,
    terms: o.terms,
    zones: o.zones.map((z) => ({ id: z.id, available: z.available })),
    plans: o.plans.map((p) => ({
      id: p.id,
      vcpus: p.vcpus,
      memory_gb: p.memoryGb,
      disk_gb: p.diskGb,
      price_per_month: formatPricePair(p.price),
      in_stock: p.inStock,
    })),
    images: o.images.map((i) => ({ id: i.id, name: i.name, type: i.type })),
  };
}

@ApiTags('Server options')
@Controller('v1/server-options')
export class ServerOptionsController {
  constructor(private readonly getOptions: GetServerOptions) {}

  /** Plans, prices, terms, stock, zones and images of one region. */
  @Get()
  @RequireAccess({ scope: 'vm:read', roles: ANY_ROLE })
  @ApiAuthenticated()
  @ApiOperation({
    operationId: 'getServerOptions',
    summary: 'Server plans, prices, terms, stock, zones and images buyable in one region',
    description:
      'API key scope vm:read, or any member with a session. Read at every request (stock and the purchase switches are never cached). ' +
      'A missing region, or an unknown one (details.valid lists the region ids): 400; a region that sells no servers: 404.',
  })
  @ApiOkResponse({ description: 'The server options of the region', type: ServerOptionsResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'unauthorized', 'forbidden', 'not_found', 'rate_limited')
  async get(@Query() query: ServerOptionsQuery) {
    return presentServerOptions(await this.getOptions.execute(query.region));
  }
}
