import { Module } from '@nestjs/common';
import { CleanUpOrphanDisksJob } from './interface/jobs/clean-up-orphan-disks.job';
import { ReconcileVolumesJob } from './interface/jobs/reconcile-volumes.job';
import { VolumesModule } from './volumes.module';

/** The orphan disk sweep and the reconciliation sweep (needs ScheduleModule.forRoot() in the application; the CLI does not import it). */
@Module({
  imports: [VolumesModule],
  providers: [CleanUpOrphanDisksJob, ReconcileVolumesJob],
})
export class VolumesJobsModule {}
