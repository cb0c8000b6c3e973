import { Global, Module } from '@nestjs/common';
import { OrganizationPolicy } from './application/organization-policy';

/** The per-organization limits and suspension, for every module that enforces them. */
@Global()
@Module({ providers: [OrganizationPolicy], exports: [OrganizationPolicy] })
export class OrganizationPolicyModule {}
