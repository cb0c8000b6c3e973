import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { OperationsModule } from '../operations/operations.module';
import { ServersModule } from '../servers/servers.module';
import { StorageProviderModule } from '../storage-provider/storage-provider.module';
import { VolumesModule } from '../volumes/volumes.module';
import { EventOutboxModule } from '../webhooks/event-outbox.module';
import { AutoRenewTerms } from './application/auto-renew.use-case';
import { ExpireTerms } from './application/expire-terms.use-case';
import { ExtendRetention } from './application/extend-retention.use-case';
import { SendExpiryNotices } from './application/send-expiry-notices.use-case';
import { SuspendServerExecutor, SuspendVolumeExecutor } from './application/suspend-executors';
import { TermStore } from './application/term-store.port';
import { TypeOrmTermStore } from './infrastructure/typeorm-term-store';

/**
 * The lifecycle of prepaid terms (terms.md), beside the operations engine: the sweeps that act
 * when a term ends and the executors of their operations (vm.suspend, volume.suspend). It uses
 * the resources' modules (their reads, their providers) and owns no table of its own.
 */
@Module({
  imports: [OperationsModule, AuditModule, EventOutboxModule, VolumesModule, ServersModule, StorageProviderModule],
  providers: [{ provide: TermStore, useClass: TypeOrmTermStore }, ExpireTerms, SendExpiryNotices, AutoRenewTerms, SuspendServerExecutor, SuspendVolumeExecutor, ExtendRetention],
  exports: [ExpireTerms, SendExpiryNotices, AutoRenewTerms, ExtendRetention],
})
export class TermsModule {}
