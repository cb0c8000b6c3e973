import { Module } from '@nestjs/common';
import { ServerRepository, VolumeRepository } from './application/volumes.port';
import { TypeOrmServerRepository, TypeOrmVolumeRepository } from './infrastructure/typeorm-volumes.repository';

@Module({
  providers: [
    { provide: VolumeRepository, useClass: TypeOrmVolumeRepository },
    { provide: ServerRepository, useClass: TypeOrmServerRepository },
  ],
  exports: [VolumeRepository, ServerRepository],
})
export class VolumesModule {}
