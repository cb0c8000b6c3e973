import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { AuthModule } from '../auth/auth.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { StaffDirectory } from './application/staff.port';
import { StaffAccounts } from './application/staff.use-cases';
import { TypeOrmStaffDirectory } from './infrastructure/typeorm-staff';
import { AdminGuard, StaffTokenCache } from './interface/http/admin.guard';
import { OrganizationControls } from './application/organization-controls';
import { OrganizationsAdmin } from './application/organizations-admin.port';
import { TypeOrmOrganizationsAdmin } from './infrastructure/typeorm-organizations-admin';
import { AdminOrganizationsController } from './interface/http/organizations.controller';
import { AdminMoneyController } from './interface/http/money.controller';
import { OperatorModule } from '../operator/operator.module';
import { AdminOperationsController } from './interface/http/operations.controller';
import { VerificationModule } from '../verification/verification.module';
import { FundingModule } from '../funding/funding.module';
import { StaffController } from './interface/http/staff.controller';
import { AdminDocsController, AdminOpenApiDocument } from './interface/http/admin-openapi';
import { OptionsModule } from '../options/options.module';
import { TermsModule } from '../terms/terms.module';
import { AdminCatalogController } from './interface/http/catalog.controller';
import { AdminRetentionController } from './interface/http/retention.controller';

/**
 * The admin API for internal tools (admin.md): served only on the admin listener (ADMIN_PORT),
 * staff tokens only, roles per route, every request in the staff audit.
 */
@Module({
  imports: [AuditModule, AuthModule, IdempotencyModule, OperatorModule, VerificationModule, OptionsModule, TermsModule, FundingModule],
  controllers: [StaffController, AdminOrganizationsController, AdminMoneyController, AdminOperationsController, AdminCatalogController, AdminRetentionController, AdminDocsController],
  providers: [
    { provide: StaffDirectory, useClass: TypeOrmStaffDirectory },
    { provide: StaffTokenCache, useFactory: () => new StaffTokenCache() },
    StaffAccounts,
    OrganizationControls,
    { provide: OrganizationsAdmin, useClass: TypeOrmOrganizationsAdmin },
    AdminGuard,
    AdminOpenApiDocument,
  ],
  exports: [StaffAccounts, AdminOpenApiDocument],
})
export class AdminModule {}

/** The admin module's controllers and providers, without the HTTP side: what the CLI needs. */
@Module({
  providers: [{ provide: StaffDirectory, useClass: TypeOrmStaffDirectory }, StaffAccounts],
  exports: [StaffAccounts],
})
export class AdminCoreModule {}
