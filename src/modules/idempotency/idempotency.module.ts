import { Module } from '@nestjs/common';
import { IdempotencyStore } from './application/idempotency.port';
import { IdempotentExecution } from './application/idempotent-execution';
import { PurgeExpiredIdempotencyRecords } from './application/purge-expired-records.use-case';
import { TypeOrmIdempotencyStore } from './infrastructure/typeorm-idempotency.store';

/**
 * Idempotency-Key for any POST: controllers call idempotencyScope(), IdempotentExecution.run()
 * and sendOutcome() (interface/http/idempotent-request.ts). The hourly purge is
 * IdempotencyJobsModule (the HTTP server imports it, the CLI does not).
 */
@Module({
  providers: [
    { provide: IdempotencyStore, useClass: TypeOrmIdempotencyStore },
    IdempotentExecution,
    PurgeExpiredIdempotencyRecords,
  ],
  exports: [IdempotentExecution, PurgeExpiredIdempotencyRecords],
})
export class IdempotencyModule {}
