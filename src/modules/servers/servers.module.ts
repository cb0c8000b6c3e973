import { TemplatesModule } from '../templates/templates.module';
import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { OperationsModule } from '../operations/operations.module';
import { StorageProviderModule } from '../volumes/storage-provider.module';
import { EventOutboxModule } from '../webhooks/event-outbox.module';
import { DeleteServerExecutor } from './application/delete-server.executor';
import { DeleteServer } from './application/delete-server.use-case';
import { ReconcileDeletingServers } from './application/reconcile-deleting-servers.use-case';
import { ServerDeletions } from './application/server-deletions.port';
import { ServerQueries } from './application/server-queries';
import { ServerReads, ServerWrites } from './application/servers.port';
import { UpdateServer } from './application/update-server.use-case';
import { TypeOrmServerDeletions } from './infrastructure/typeorm-server-deletions';
import { TypeOrmServerWrites } from './infrastructure/typeorm-server-writes';
import { TypeOrmServerReads } from './infrastructure/typeorm-server-reads';
import { CreateServerConsole } from './application/create-console.use-case';
import { ComputeProviderModule } from './compute-provider.module';
import { ConsoleController } from './interface/http/console.controller';
import { ServersController } from './interface/http/servers.controller';

/** Servers (VPS): reads, edits and deletion of the organization's servers, bought or seeded. */
@Module({
  imports: [IdempotencyModule, OperationsModule, StorageProviderModule, ComputeProviderModule, AccessModule, EventOutboxModule, TemplatesModule],
  controllers: [ServersController, ConsoleController],
  providers: [
    { provide: ServerReads, useClass: TypeOrmServerReads },
    { provide: ServerWrites, useClass: TypeOrmServerWrites },
    ServerQueries,
    UpdateServer,
    CreateServerConsole,
    // Deletion (DELETE /v1/servers/{id} and the vm.delete executor).
    { provide: ServerDeletions, useClass: TypeOrmServerDeletions },
    DeleteServer,
    DeleteServerExecutor,
    ReconcileDeletingServers,
  ],
  exports: [ServerReads, ComputeProviderModule, ReconcileDeletingServers],
})
export class ServersModule {}
