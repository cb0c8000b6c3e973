import { DynamicModule, Module } from '@nestjs/common';
import { AdminCoreModule } from '../modules/admin/admin.module';
import { AuditModule } from '../modules/audit/audit.module';
import { AuthModule } from '../modules/auth/auth.module';
import { OrganizationPolicyModule } from '../modules/auth/organization-policy.module';
import { OperatorModule } from '../modules/operator/operator.module';
import { VerificationModule } from '../modules/verification/verification.module';
import { Settings } from '../shared/config/settings';
import { DatabaseModule } from '../shared/database/database.module';
import { SharedModule } from '../shared/shared.module';

/** The operator CLI's application context: the same use cases as the HTTP API, no HTTP. */
@Module({})
export class CliModule {
  static forRoot(settings: Settings): DynamicModule {
    return {
      module: CliModule,
      imports: [SharedModule.forRoot(settings), DatabaseModule, AuditModule, OrganizationPolicyModule, AuthModule, OperatorModule, VerificationModule, AdminCoreModule],
    };
  }
}
