import { Module } from '@nestjs/common';
import { ReconcileDeletingServersJob } from './interface/jobs/reconcile-deleting-servers.job';
import { ServersModule } from './servers.module';

/** The servers' sweeps (needs ScheduleModule.forRoot() in the application; the CLI does not import it). */
@Module({
  imports: [ServersModule],
  providers: [ReconcileDeletingServersJob],
})
export class ServersJobsModule {}
