import { Module } from '@nestjs/common';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { OperationsModule } from '../operations/operations.module';
import { WalletModule } from '../wallet/wallet.module';
import { RenewVolume } from './application/renew-volume.use-case';
import { RenewalExecutor } from './application/renewal-executor';
import { VolumeQueries } from './application/volume-queries';
import { ServerRepository, VolumeRepository } from './application/volumes.port';
import { TypeOrmServerRepository, TypeOrmVolumeRepository } from './infrastructure/typeorm-volumes.repository';
import { VolumesController } from './interface/http/volumes.controller';

@Module({
  imports: [OperationsModule, WalletModule, IdempotencyModule],
  controllers: [VolumesController],
  providers: [
    { provide: VolumeRepository, useClass: TypeOrmVolumeRepository },
    { provide: ServerRepository, useClass: TypeOrmServerRepository },
    VolumeQueries,
    RenewVolume,
    RenewalExecutor,
  ],
  exports: [VolumeRepository, ServerRepository],
})
export class VolumesModule {}
