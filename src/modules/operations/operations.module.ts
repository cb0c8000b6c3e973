import { Module } from '@nestjs/common';
import { WalletModule } from '../wallet/wallet.module';
import { AdvanceOperations } from './application/advance-operations.use-case';
import { OperationExecutors } from './application/operation-executors';
import { OperationQueries } from './application/operation-queries';
import { OperationRepository } from './application/operations.port';
import { TypeOrmOperationRepository } from './infrastructure/typeorm-operations.repository';
import { OperationsController } from './interface/http/operations.controller';

/**
 * Operations: the record of every long action, its HTTP reads, and the use case that advances
 * them. Modules that start operations register an executor for their type with OperationExecutors.
 * The scheduled worker is OperationsWorkerModule (the HTTP server imports it, the CLI does not).
 */
@Module({
  imports: [WalletModule],
  controllers: [OperationsController],
  providers: [
    { provide: OperationRepository, useClass: TypeOrmOperationRepository },
    OperationExecutors,
    OperationQueries,
    AdvanceOperations,
  ],
  exports: [OperationRepository, OperationExecutors, AdvanceOperations],
})
export class OperationsModule {}
