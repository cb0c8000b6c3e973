import { Global, Module } from '@nestjs/common';
import { OrganizationPolicy } from './application/organization-policy';
import { OrganizationSettings } from './application/organization-settings.port';
import { TypeOrmOrganizationSettings } from './infrastructure/typeorm-organization-settings';

/** The per-organization limits and suspension, for every module that enforces them. */
@Global()
@Module({ providers: [OrganizationPolicy, { provide: OrganizationSettings, useClass: TypeOrmOrganizationSettings }], exports: [OrganizationPolicy] })
export class OrganizationPolicyModule {}
