import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { OperationsModule } from '../operations/operations.module';
import { StorageProviderModule } from '../storage-provider/storage-provider.module';
import { VolumesModule } from '../volumes/volumes.module';
import { WalletModule } from '../wallet/wallet.module';
import { EventOutboxModule } from '../webhooks/event-outbox.module';
import { CreateSnapshotExecutor, DeleteSnapshotExecutor, RenewSnapshotExecutor } from './application/snapshot-executors';
import { SnapshotTerms } from './application/snapshot-terms.use-case';
import { CreateSnapshot, DeleteSnapshot, RenewSnapshot, SnapshotQueries, UpdateSnapshot } from './application/snapshot.use-cases';
import { SnapshotRepository } from './application/snapshots.port';
import { TypeOrmSnapshotRepository } from './infrastructure/typeorm-snapshots.repository';
import { SnapshotsController, VolumeSnapshotsController } from './interface/http/snapshots.controller';

/**
 * Volume snapshots: point-in-time copies of disks, prepaid for a term, kept after their disk,
 * restored as new disks. The storage provider copies and deletes them; the term sweep suspends
 * and releases them (SnapshotTerms).
 */
@Module({
  imports: [OperationsModule, WalletModule, IdempotencyModule, AuditModule, StorageProviderModule, EventOutboxModule, VolumesModule],
  controllers: [VolumeSnapshotsController, SnapshotsController],
  providers: [
    { provide: SnapshotRepository, useClass: TypeOrmSnapshotRepository },
    CreateSnapshot,
    RenewSnapshot,
    DeleteSnapshot,
    UpdateSnapshot,
    SnapshotQueries,
    CreateSnapshotExecutor,
    RenewSnapshotExecutor,
    DeleteSnapshotExecutor,
    SnapshotTerms,
  ],
  exports: [SnapshotRepository, SnapshotTerms],
})
export class SnapshotsModule {}
