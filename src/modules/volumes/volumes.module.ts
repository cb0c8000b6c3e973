import { Module } from '@nestjs/common';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { OperationsModule } from '../operations/operations.module';
import { OptionsModule } from '../options/options.module';
import { ServersModule } from '../servers/servers.module';
import { WalletModule } from '../wallet/wallet.module';
import { EventOutboxModule } from '../webhooks/event-outbox.module';
import { RenewVolume } from './application/renew-volume.use-case';
import { QuoteRepository } from './application/quotes.port';
import { CreateQuote, QuoteQueries } from './application/quotes.use-cases';
import { RenewalExecutor } from './application/renewal-executor';
import { UpdateVolume } from './application/update-volume.use-case';
import { AttachVolumeExecutor, CreateVolumeExecutor, DeleteVolumeExecutor, DetachVolumeExecutor, ResizeVolumeExecutor } from './application/volume-action-executors';
import { ResizeVolume } from './application/resize-volume.use-case';
import { VolumeResizes } from './application/volume-resizes.port';
import { TypeOrmVolumeResizes } from './infrastructure/typeorm-volume-resizes';
import { VolumeStates } from './application/volume-states.port';
import { TypeOrmVolumeStates } from './infrastructure/typeorm-volume-states';
import { StorageProviderModule } from '../storage-provider/storage-provider.module';
import { CleanUpOrphanDisks } from './application/clean-up-orphan-disks.use-case';
import { ReconcileVolumesWithProvider } from './application/reconcile-volumes.use-case';
import { PurchaseVolume } from './application/purchase-volume.use-case';
import { AttachVolume, DeleteVolume, DetachVolume, VolumeActionRunner } from './application/volume-actions.use-cases';
import { VolumeQueries } from './application/volume-queries';
import { ServerRepository, VolumeRepository } from './application/volumes.port';
import { TypeOrmServerRepository, TypeOrmVolumeRepository } from './infrastructure/typeorm-volumes.repository';
import { TypeOrmQuoteRepository } from './infrastructure/typeorm-quotes.repository';
import { SnapshotSources } from './application/snapshot-sources.port';
import { TypeOrmSnapshotSources } from './infrastructure/typeorm-snapshot-sources';
import { QuotesController } from './interface/http/quotes.controller';
import { VolumesController } from './interface/http/volumes.controller';

@Module({
  imports: [OperationsModule, WalletModule, IdempotencyModule, OptionsModule, StorageProviderModule, EventOutboxModule, ServersModule],
  controllers: [VolumesController, QuotesController],
  providers: [
    { provide: VolumeRepository, useClass: TypeOrmVolumeRepository },
    { provide: ServerRepository, useClass: TypeOrmServerRepository },
    VolumeQueries,
    { provide: QuoteRepository, useClass: TypeOrmQuoteRepository },
    { provide: SnapshotSources, useClass: TypeOrmSnapshotSources },
    RenewVolume,
    RenewalExecutor,
    { provide: VolumeStates, useClass: TypeOrmVolumeStates },
    CreateVolumeExecutor,
    AttachVolumeExecutor,
    DetachVolumeExecutor,
    DeleteVolumeExecutor,
    ResizeVolumeExecutor,
    { provide: VolumeResizes, useClass: TypeOrmVolumeResizes },
    ResizeVolume,
    CleanUpOrphanDisks,
    ReconcileVolumesWithProvider,
    UpdateVolume,
    CreateQuote,
    QuoteQueries,
    PurchaseVolume,
    VolumeActionRunner,
    AttachVolume,
    DetachVolume,
    DeleteVolume,
  ],
  exports: [VolumeRepository, ServerRepository, QuoteRepository, StorageProviderModule, CleanUpOrphanDisks, ReconcileVolumesWithProvider, RenewVolume],
})
export class VolumesModule {}
