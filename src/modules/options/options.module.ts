import { Module } from '@nestjs/common';
import { Catalog } from './application/catalog.port';
import { TypeOrmCatalog } from './infrastructure/typeorm-catalog';

@Module({
  providers: [{ provide: Catalog, useClass: TypeOrmCatalog }],
  exports: [Catalog],
})
export class OptionsModule {}
