import { Module } from '@nestjs/common';
import { AuthModule } from './auth.module';
import { PurgeExpiredSessionsJob } from './interface/jobs/purge-expired-sessions.job';
import { RetentionJob } from './interface/jobs/retention.job';
import { RetentionPurge } from './infrastructure/retention-purge';

/** The hourly purge of expired sessions (needs ScheduleModule.forRoot() in the application; the CLI does not import it). */
@Module({
  imports: [AuthModule],
  providers: [PurgeExpiredSessionsJob, RetentionPurge, RetentionJob],
})
export class AuthJobsModule {}
