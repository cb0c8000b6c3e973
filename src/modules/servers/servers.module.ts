import { TemplatesModule } from '../templates/templates.module';
import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { OperationsModule } from '../operations/operations.module';
import { StorageProviderModule } from '../storage-provider/storage-provider.module';
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
import { OptionsModule } from '../options/options.module';
import { WalletModule } from '../wallet/wallet.module';
import { PurchaseServer } from './application/purchase-server.use-case';
import { CreateServerExecutor, RebootServerExecutor, RebuildServerExecutor, RenewServerExecutor, ResizeServerExecutor, StartServerExecutor, StopServerExecutor } from './application/server-executors';
import { RebuildServer, ResizeServer } from './application/server-changes.use-cases';
import { ServerLifecycle } from './application/server-lifecycle.port';
import { PowerServer, RenewServer, ServerActionRunner } from './application/server-power.use-cases';
import { ServerQuotes } from './application/server-quotes.port';
import { CreateServerQuote } from './application/server-quotes.use-case';
import { TypeOrmServerLifecycle } from './infrastructure/typeorm-server-lifecycle';
import { TypeOrmServerQuotes } from './infrastructure/typeorm-server-quotes';
import { ServerActionsController } from './interface/http/server-actions.controller';
import { CreateServerConsole } from './application/create-console.use-case';
import { ComputeProviderModule } from './compute-provider.module';
import { ConsoleController } from './interface/http/console.controller';
import { ServersController } from './interface/http/servers.controller';
import { OrganizationImages } from './application/organization-images.port';
import { TypeOrmOrganizationImages } from './infrastructure/typeorm-organization-images';
import { Networks } from './application/networks.port';
import { AttachServerToNetwork, DetachServerFromNetwork, NetworkUseCases } from './application/networks.use-cases';
import { AttachNetworkExecutor, DetachNetworkExecutor } from './application/network-executors';
import { TypeOrmNetworks } from './infrastructure/typeorm-networks';
import { NetworksController, ServerNetworksController } from './interface/http/networks.controller';

/** Servers (VPS): buying, power actions, renewal, reads, edits, consoles and deletion of the organization's servers, bought or seeded. */
@Module({
  imports: [IdempotencyModule, OperationsModule, StorageProviderModule, ComputeProviderModule, AccessModule, EventOutboxModule, TemplatesModule, WalletModule, OptionsModule],
  controllers: [ServersController, ServerActionsController, ConsoleController, NetworksController, ServerNetworksController],
  providers: [
    { provide: ServerReads, useClass: TypeOrmServerReads },
    { provide: ServerWrites, useClass: TypeOrmServerWrites },
    ServerQueries,
    UpdateServer,
    CreateServerConsole,
    // Buying, power actions, renewal and their executors.
    { provide: ServerLifecycle, useClass: TypeOrmServerLifecycle },
    { provide: ServerQuotes, useClass: TypeOrmServerQuotes },
    { provide: OrganizationImages, useClass: TypeOrmOrganizationImages },
    PurchaseServer,
    ServerActionRunner,
    PowerServer,
    RenewServer,
    CreateServerQuote,
    CreateServerExecutor,
    StartServerExecutor,
    StopServerExecutor,
    RebootServerExecutor,
    RenewServerExecutor,
    // Plan changes and rebuilds.
    ResizeServer,
    RebuildServer,
    ResizeServerExecutor,
    RebuildServerExecutor,
    // Deletion (DELETE /v1/servers/{id} and the vm.delete executor).
    { provide: ServerDeletions, useClass: TypeOrmServerDeletions },
    DeleteServer,
    DeleteServerExecutor,
    ReconcileDeletingServers,
    // Private networks and the servers' attachments.
    { provide: Networks, useClass: TypeOrmNetworks },
    NetworkUseCases,
    AttachServerToNetwork,
    DetachServerFromNetwork,
    AttachNetworkExecutor,
    DetachNetworkExecutor,
  ],
  exports: [Networks, ServerReads, ServerWrites, ServerLifecycle, ServerQuotes, CreateServerQuote, ComputeProviderModule, ReconcileDeletingServers, DeleteServer, RenewServer],
})
export class ServersModule {}
