import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module';
import { FirewallPushJob } from '../access/interface/jobs/firewall-push.job';
import { AuditModule } from '../audit/audit.module';
import { CleanUpOrphanInstances } from './application/clean-up-orphan-instances.use-case';
import { OrphanInstanceServers } from './application/orphan-instances.port';
import { ReconcileServersWithProvider } from './application/reconcile-servers.use-case';
import { ServerReconcileStates } from './application/server-reconcile.port';
import { ComputeProviderModule } from './compute-provider.module';
import { TypeOrmOrphanInstanceServers } from './infrastructure/typeorm-orphan-instance-servers';
import { TypeOrmServerReconcileStates } from './infrastructure/typeorm-server-reconcile-states';
import { CleanUpOrphanInstancesJob } from './interface/jobs/clean-up-orphan-instances.job';
import { ReconcileDeletingServersJob } from './interface/jobs/reconcile-deleting-servers.job';
import { ReconcileServersJob } from './interface/jobs/reconcile-servers.job';
import { ServersModule } from './servers.module';
import { ReconcileNetworkAttachments } from './application/reconcile-network-attachments.use-case';
import { ReconcileNetworkAttachmentsJob } from './interface/jobs/reconcile-network-attachments.job';

/**
 * The servers' sweeps (need ScheduleModule.forRoot() in the application; the CLI does not import
 * it): orphan instances; deletions left `deleting` (settled by the vm.delete executor from the
 * instance); other live servers compared with their instances (reconciliation); firewall rules
 * not yet applied at the provider (pushed again).
 */
@Module({
  imports: [ComputeProviderModule, ServersModule, AuditModule, AccessModule],
  providers: [
    { provide: OrphanInstanceServers, useClass: TypeOrmOrphanInstanceServers },
    CleanUpOrphanInstances,
    CleanUpOrphanInstancesJob,
    ReconcileDeletingServersJob,
    { provide: ServerReconcileStates, useClass: TypeOrmServerReconcileStates },
    ReconcileServersWithProvider,
    ReconcileServersJob,
    ReconcileNetworkAttachments,
    ReconcileNetworkAttachmentsJob,
    FirewallPushJob,
  ],
  exports: [CleanUpOrphanInstances, ReconcileServersWithProvider, ReconcileNetworkAttachments],
})
export class ServersJobsModule {}
