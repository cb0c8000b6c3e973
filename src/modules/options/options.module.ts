import { Module } from '@nestjs/common';
import { SetRegionCapacity, SetZoneAvailability } from './application/catalog-admin.use-cases';
import { Catalog } from './application/catalog.port';
import { CatalogQueries } from './application/catalog-queries.port';
import { GetVolumeOptions } from './application/get-volume-options.use-case';
import { ListRegions } from './application/list-regions.use-case';
import { TypeOrmCatalog } from './infrastructure/typeorm-catalog';
import { TypeOrmCatalogQueries } from './infrastructure/typeorm-catalog-queries';
import { RegionsController } from './interface/http/regions.controller';
import { VolumeOptionsController } from './interface/http/volume-options.controller';

@Module({
  controllers: [VolumeOptionsController, RegionsController],
  providers: [
    { provide: Catalog, useClass: TypeOrmCatalog },
    { provide: CatalogQueries, useClass: TypeOrmCatalogQueries },
    GetVolumeOptions,
    ListRegions,
    SetZoneAvailability,
    SetRegionCapacity,
  ],
  exports: [Catalog, SetZoneAvailability, SetRegionCapacity],
})
export class OptionsModule {}
