import { Module } from '@nestjs/common';
import { CleanUpOrphanInstances } from './application/clean-up-orphan-instances.use-case';
import { OrphanInstanceServers } from './application/orphan-instances.port';
import { ComputeProviderModule } from './compute-provider.module';
import { TypeOrmOrphanInstanceServers } from './infrastructure/typeorm-orphan-instance-servers';
import { CleanUpOrphanInstancesJob } from './interface/jobs/clean-up-orphan-instances.job';
import { ReconcileDeletingServersJob } from './interface/jobs/reconcile-deleting-servers.job';
import { ServersModule } from './servers.module';

/**
 * The servers' sweeps: orphan instances, and deletions left `deleting` (needs
 * ScheduleModule.forRoot() in the application; the CLI does not import it).
 */
@Module({
  imports: [ComputeProviderModule, ServersModule],
  providers: [{ provide: OrphanInstanceServers, useClass: TypeOrmOrphanInstanceServers }, CleanUpOrphanInstances, CleanUpOrphanInstancesJob, ReconcileDeletingServersJob],
  exports: [CleanUpOrphanInstances],
})
export class ServersJobsModule {}
