import { Module } from '@nestjs/common';
import { ComputeProviderModule } from '../servers/compute-provider.module';
import {
  AddReservedIpv4Pool, ListRegionDetails, SetPurchasesPaused, SetRegionIpv6Prefix, SetRegionCapacity, SetRegionPrices, SetRegionVcpus, SetZoneAvailability, UpdateRegion,
} from './application/catalog-admin.use-cases';
import { Catalog } from './application/catalog.port';
import { CatalogQueries } from './application/catalog-queries.port';
import { GetVolumeOptions } from './application/get-volume-options.use-case';
import { GetServerOptions } from './application/get-server-options.use-case';
import { ServerCatalogQueries } from './application/server-catalog-queries.port';
import { TypeOrmServerCatalogQueries } from './infrastructure/typeorm-server-catalog-queries';
import { ServerOptionsController } from './interface/http/server-options.controller';
import { ListRegions } from './application/list-regions.use-case';
import { TypeOrmCatalog } from './infrastructure/typeorm-catalog';
import { TypeOrmCatalogQueries } from './infrastructure/typeorm-catalog-queries';
import { RegionsController } from './interface/http/regions.controller';
import { VolumeOptionsController } from './interface/http/volume-options.controller';

@Module({
  imports: [ComputeProviderModule],
  controllers: [VolumeOptionsController, RegionsController, ServerOptionsController],
  providers: [
    { provide: Catalog, useClass: TypeOrmCatalog },
    { provide: CatalogQueries, useClass: TypeOrmCatalogQueries },
    GetVolumeOptions,
    ListRegions,
    SetZoneAvailability,
    SetRegionCapacity,
    SetRegionVcpus,
    SetPurchasesPaused,
    ListRegionDetails,
    UpdateRegion,
    SetRegionPrices,
    SetRegionIpv6Prefix,
    AddReservedIpv4Pool,
    { provide: ServerCatalogQueries, useClass: TypeOrmServerCatalogQueries },
    GetServerOptions,
  ],
  exports: [Catalog, SetZoneAvailability, SetRegionCapacity, SetRegionVcpus, SetPurchasesPaused, ListRegionDetails, UpdateRegion, SetRegionPrices, ServerCatalogQueries],
})
export class OptionsModule {}
