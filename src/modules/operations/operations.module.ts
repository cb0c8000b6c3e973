import { Module } from '@nestjs/common';
import { WalletModule } from '../wallet/wallet.module';
import { EventOutboxModule } from '../webhooks/event-outbox.module';
import { AdvanceOperations } from './application/advance-operations.use-case';
import { OperationAcceptance } from './application/operation-acceptance.port';
import { OperationExecutors } from './application/operation-executors';
import { OperationQueries } from './application/operation-queries';
import { OperationSignals } from './application/operation-signals.port';
import { OperationRepository } from './application/operations.port';
import { OperationsTelemetry } from './application/operations-telemetry.port';
import { DatabaseOperationSignals } from './infrastructure/database-operation-signals';
import { TypeOrmOperationAcceptance } from './infrastructure/typeorm-operation-acceptance';
import { PrometheusOperationsTelemetry } from './infrastructure/prometheus-operations-telemetry';
import { TypeOrmOperationRepository } from './infrastructure/typeorm-operations.repository';
import { OperationsController } from './interface/http/operations.controller';

/**
 * Operations: the record of every long action, its HTTP reads (long-poll included), the
 * signals between the processes that accept, execute and wait for them, and the use case that
 * advances them. Modules that start operations register an executor for their type with
 * OperationExecutors. The worker is OperationsWorkerModule (the HTTP server imports it, the CLI does not).
 */
@Module({
  imports: [WalletModule, EventOutboxModule],
  controllers: [OperationsController],
  providers: [
    { provide: OperationRepository, useClass: TypeOrmOperationRepository },
    { provide: OperationAcceptance, useClass: TypeOrmOperationAcceptance },
    { provide: OperationSignals, useClass: DatabaseOperationSignals },
    { provide: OperationsTelemetry, useClass: PrometheusOperationsTelemetry },
    OperationExecutors,
    OperationQueries,
    AdvanceOperations,
  ],
  exports: [OperationRepository, OperationAcceptance, OperationExecutors, AdvanceOperations, OperationSignals],
})
export class OperationsModule {}
