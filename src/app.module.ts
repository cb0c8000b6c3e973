import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { AdminModule } from './modules/admin/admin.module';
import { AccessModule } from './modules/access/access.module';
import { AuditModule } from './modules/audit/audit.module';
import { AuthJobsModule } from './modules/auth/auth-jobs.module';
import { ImagesJobsModule } from './modules/images/images-jobs.module';
import { AuthModule } from './modules/auth/auth.module';
import { OrganizationPolicyModule } from './modules/auth/organization-policy.module';
import { DocsModule } from './modules/docs/docs.module';
import { FundingModule } from './modules/funding/funding.module';
import { IdempotencyJobsModule } from './modules/idempotency/idempotency-jobs.module';
import { IdempotencyModule } from './modules/idempotency/idempotency.module';
import { OperationsWorkerModule } from './modules/operations/operations-worker.module';
import { OperationsModule } from './modules/operations/operations.module';
import { MonitoringModule } from './modules/monitoring/monitoring.module';
import { OperatorModule } from './modules/operator/operator.module';
import { OptionsModule } from './modules/options/options.module';
import { ServersModule } from './modules/servers/servers.module';
import { TemplatesModule } from './modules/templates/templates.module';
import { ServersJobsModule } from './modules/servers/servers-jobs.module';
import { SnapshotsJobsModule } from './modules/snapshots/snapshots-jobs.module';
import { TermsJobsModule } from './modules/terms/terms-jobs.module';
import { TermsModule } from './modules/terms/terms.module';
import { SnapshotsModule } from './modules/snapshots/snapshots.module';
import { ImagesModule } from './modules/images/images.module';
import { ReservedIpsModule } from './modules/reserved-ips/reserved-ips.module';
import { ReservedIpsJobsModule } from './modules/reserved-ips/reserved-ips-jobs.module';
import { VolumesJobsModule } from './modules/volumes/volumes-jobs.module';
import { VolumesModule } from './modules/volumes/volumes.module';
import { WalletModule } from './modules/wallet/wallet.module';
import { WebhooksModule } from './modules/webhooks/webhooks.module';
import { WebhooksWorkerModule } from './modules/webhooks/webhooks-worker.module';
import { VerificationModule } from './modules/verification/verification.module';
import { Settings } from './shared/config/settings';
import { DatabaseModule } from './shared/database/database.module';
import { HttpExceptionFilter } from './shared/http/http-exception.filter';
import { RequestValidationPipe } from './shared/http/validation.pipe';
import { ObservabilityModule } from './shared/observability/observability.module';
import { Clock } from './shared/kernel/clock/clock';
import { SharedModule } from './shared/shared.module';

@Module({})
export class AppModule {
  static forRoot(settings: Settings, clock?: Clock): DynamicModule {
    return {
      module: AppModule,
      imports: [
        SharedModule.forRoot(settings, clock),
        DatabaseModule,
        ObservabilityModule,
        ScheduleModule.forRoot(),
        AuditModule,
        OrganizationPolicyModule,
        AuthModule,
        WalletModule,
        OptionsModule,
        IdempotencyModule,
        OperationsModule,
        VolumesModule,
        OperationsWorkerModule,
        IdempotencyJobsModule,
        AuthJobsModule,
        VolumesJobsModule,
        OperatorModule,
        MonitoringModule,
        DocsModule,
        AccessModule,
        ServersModule,
        TemplatesModule,
        ServersJobsModule,
        SnapshotsModule,
        SnapshotsJobsModule,
        ImagesModule,
        ImagesJobsModule,
        ReservedIpsModule,
        ReservedIpsJobsModule,
        TermsModule,
        TermsJobsModule,
        WebhooksModule,
        WebhooksWorkerModule,
        VerificationModule,
        FundingModule,
        AdminModule,
      ],
      providers: [
        { provide: APP_FILTER, useClass: HttpExceptionFilter },
        { provide: APP_PIPE, useClass: RequestValidationPipe },
      ],
    };
  }
}
