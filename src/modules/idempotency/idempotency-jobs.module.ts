import { Module } from '@nestjs/common';
import { IdempotencyModule } from './idempotency.module';
import { PurgeIdempotencyRecordsJob } from './interface/jobs/purge-idempotency-records.job';

/** The hourly purge of expired idempotency records (needs ScheduleModule.forRoot() in the application). */
@Module({
  imports: [IdempotencyModule],
  providers: [PurgeIdempotencyRecordsJob],
})
export class IdempotencyJobsModule {}
