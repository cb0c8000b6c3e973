import { Module } from '@nestjs/common';
import { TermSweepJob } from './interface/jobs/term-sweep.job';
import { TermsModule } from './terms.module';
import { SnapshotsModule } from '../snapshots/snapshots.module';
import { ImagesModule } from '../images/images.module';
import { ReservedIpsModule } from '../reserved-ips/reserved-ips.module';

/** The term sweep, every TERM_SWEEP_MS in worker processes (needs ScheduleModule.forRoot() in the application; the CLI does not import it). */
@Module({
  imports: [TermsModule, SnapshotsModule, ImagesModule, ReservedIpsModule],
  providers: [TermSweepJob],
})
export class TermsJobsModule {}
