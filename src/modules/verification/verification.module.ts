import { Module } from '@nestjs/common';
import { InvariantChecks } from './application/invariant-checks.port';
import { VerifyInvariants } from './application/verify-invariants.use-case';
import { TypeOrmInvariantChecks } from './infrastructure/typeorm-invariant-checks';
import { ComputeProviderModule } from '../servers/compute-provider.module';
import { StorageProviderModule } from '../storage-provider/storage-provider.module';
import { TemplateAppsModule } from '../templates/templates.module';

/** The invariant verifier (`npm run cli -- verify`): read-only checks of money, operations and capacity. */
@Module({
  imports: [StorageProviderModule, ComputeProviderModule, TemplateAppsModule],
  providers: [{ provide: InvariantChecks, useClass: TypeOrmInvariantChecks }, VerifyInvariants],
  exports: [VerifyInvariants],
})
export class VerificationModule {}
