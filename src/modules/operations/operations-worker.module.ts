import { Module } from '@nestjs/common';
import { OperationsWorker } from './interface/worker/operations.worker';
import { OperationsModule } from './operations.module';

/** The scheduled worker (needs ScheduleModule.forRoot() in the application). */
@Module({
  imports: [OperationsModule],
  providers: [OperationsWorker],
})
export class OperationsWorkerModule {}
