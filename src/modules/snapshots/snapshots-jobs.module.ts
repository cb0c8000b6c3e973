import { Module } from '@nestjs/common';
import { CleanUpOrphanSnapshots } from './application/clean-up-orphan-snapshots.use-case';
import { CleanUpOrphanSnapshotsJob } from './interface/jobs/clean-up-orphan-snapshots.job';
import { SnapshotsModule } from './snapshots.module';
import { StorageProviderModule } from '../storage-provider/storage-provider.module';

/** The orphan snapshot sweep (needs ScheduleModule.forRoot() in the application; the CLI does not import it). */
@Module({
  imports: [SnapshotsModule, StorageProviderModule],
  providers: [CleanUpOrphanSnapshots, CleanUpOrphanSnapshotsJob],
  exports: [CleanUpOrphanSnapshots],
})
export class SnapshotsJobsModule {}
