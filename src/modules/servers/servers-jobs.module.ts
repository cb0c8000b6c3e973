import { Module } from '@nestjs/common';
import { CleanUpOrphanInstances } from './application/clean-up-orphan-instances.use-case';
import { OrphanInstanceServers } from './application/orphan-instances.port';
import { ComputeProviderModule } from './compute-provider.module';
import { TypeOrmOrphanInstanceServers } from './infrastructure/typeorm-orphan-instance-servers';
import { CleanUpOrphanInstancesJob } from './interface/jobs/clean-up-orphan-instances.job';

/** The orphan instance sweep (needs ScheduleModule.forRoot() in the application; the CLI does not import it). */
@Module({
  imports: [ComputeProviderModule],
  providers: [{ provide: OrphanInstanceServers, useClass: TypeOrmOrphanInstanceServers }, CleanUpOrphanInstances, CleanUpOrphanInstancesJob],
  exports: [CleanUpOrphanInstances],
})
export class ServersJobsModule {}
