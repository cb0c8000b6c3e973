import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { Accounts } from './application/accounts.port';
import { CreateApiKey, RevokeApiKey } from './application/api-keys.use-cases';
import { Authenticate } from './application/authenticate.use-case';
import { Credentials } from './application/credentials.port';
import { LogIn, LogOut, SignUp } from './application/sessions.use-cases';
import { TypeOrmAccounts } from './infrastructure/typeorm-accounts.repository';
import { TypeOrmCredentials } from './infrastructure/typeorm-credentials.repository';
import { AuthenticationGuard, PermissionGuard } from './interface/http/access.guards';
import { AuthController } from './interface/http/auth.controller';

@Module({
  controllers: [AuthController],
  providers: [
    { provide: Accounts, useClass: TypeOrmAccounts },
    { provide: Credentials, useClass: TypeOrmCredentials },
    Authenticate,
    SignUp,
    LogIn,
    LogOut,
    CreateApiKey,
    RevokeApiKey,
    // Global guards, in this order: 401 authentication, then 403 permission.
    { provide: APP_GUARD, useClass: AuthenticationGuard },
    { provide: APP_GUARD, useClass: PermissionGuard },
  ],
  exports: [Accounts, Credentials, Authenticate, CreateApiKey, RevokeApiKey],
})
export class AuthModule {}
