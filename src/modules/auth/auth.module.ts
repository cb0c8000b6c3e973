import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { getOptionsToken, getStorageToken } from '@nestjs/throttler';
import { Settings } from '../../shared/config/settings';
import { BodyErrorGuard } from '../../shared/http/body-parsing';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { Accounts } from './application/accounts.port';
import { CreateApiKey, ListApiKeys, RevokeApiKey } from './application/api-keys.use-cases';
import { ChangeMemberRole, ListMembers, RemoveMember } from './application/members.use-cases';
import { AcceptInvitation, CreateInvitation, ListInvitations, RevokeInvitation } from './application/invitations.use-cases';
import { Invitations, Organizations } from './application/organizations.port';
import { CreateOrganization, ListOrganizations, RenameOrganization } from './application/organizations.use-cases';
import { TypeOrmInvitations, TypeOrmOrganizations } from './infrastructure/typeorm-organizations.repository';
import { InvitationsController } from './interface/http/invitations.controller';
import { OrganizationsController } from './interface/http/organizations.controller';
import { Authenticate } from './application/authenticate.use-case';
import { CredentialCache } from './application/credential-cache';
import { Credentials } from './application/credentials.port';
import { PurgeExpiredSessions } from './application/purge-expired-sessions.use-case';
import { LogIn, LogOut, SignUp } from './application/sessions.use-cases';
import { LoginFailures } from './application/login-throttle';
import { AuditLoginFailures } from './infrastructure/audit-login-failures';
import { TypeOrmAccounts } from './infrastructure/typeorm-accounts.repository';
import { FixedWindowRateLimitStorage } from './infrastructure/rate-limit.storage';
import { TypeOrmCredentials } from './infrastructure/typeorm-credentials.repository';
import { AuthenticationGuard, PermissionGuard } from './interface/http/access.guards';
import { ApiKeysController } from './interface/http/api-keys.controller';
import { AuthController } from './interface/http/auth.controller';
import { MembersController } from './interface/http/members.controller';
import { RateLimitGuard, rateLimitOptions } from './interface/http/rate-limit.guard';
import { FailedAuthenticationLimit } from './interface/http/failed-authentication-limit';

@Module({
  imports: [IdempotencyModule],
  controllers: [AuthController, ApiKeysController, MembersController, OrganizationsController, InvitationsController],
  providers: [
    { provide: Accounts, useClass: TypeOrmAccounts },
    { provide: Credentials, useClass: TypeOrmCredentials },
    { provide: Organizations, useClass: TypeOrmOrganizations },
    { provide: Invitations, useClass: TypeOrmInvitations },
    // One per process: API keys and sessions read at most once a second (decisions.md revocation rule).
    { provide: CredentialCache, useFactory: () => new CredentialCache() },
    Authenticate,
    SignUp,
    LogIn,
    { provide: LoginFailures, useClass: AuditLoginFailures },
    LogOut,
    CreateApiKey,
    RevokeApiKey,
    PurgeExpiredSessions,
    ListApiKeys,
    ListMembers,
    ChangeMemberRole,
    RemoveMember,
    ListOrganizations,
    CreateOrganization,
    RenameOrganization,
    CreateInvitation,
    ListInvitations,
    RevokeInvitation,
    AcceptInvitation,
    // The throttler's options and storage (fixed windows; Redis when REDIS_URL is set).
    { provide: getOptionsToken(), useFactory: rateLimitOptions, inject: [Settings] },
    FixedWindowRateLimitStorage,
    { provide: getStorageToken(), useExisting: FixedWindowRateLimitStorage },
    FailedAuthenticationLimit,
    // Global guards, run in this order (decisions.md check order):
    // 401 authentication, then 429 rate limit, then 403 permission, then the body's own 400/413.
    { provide: APP_GUARD, useClass: AuthenticationGuard },
    { provide: APP_GUARD, useClass: RateLimitGuard },
    { provide: APP_GUARD, useClass: PermissionGuard },
    { provide: APP_GUARD, useClass: BodyErrorGuard },
  ],
  exports: [Accounts, Credentials, Authenticate, CreateApiKey, RevokeApiKey, PurgeExpiredSessions, FixedWindowRateLimitStorage],
})
export class AuthModule {}
