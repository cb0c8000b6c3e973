import { Module } from '@nestjs/common';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { ComputeProviderModule } from '../servers/compute-provider.module';
import { FirewallPushes, FirewallRuleRepository, ServerDirectory, SshKeyRepository } from './application/access.ports';
import { FirewallEnforcement } from './application/firewall-enforcement';
import { CreateFirewallRule, DeleteFirewallRule, FirewallQueries } from './application/firewall-rules.use-cases';
import { ServerAccess } from './application/server-access';
import { CreateSshKey, DeleteSshKey, RenameSshKey, SshKeyQueries } from './application/ssh-keys.use-cases';
import { TypeOrmFirewallPushes, TypeOrmFirewallRuleRepository, TypeOrmServerDirectory, TypeOrmSshKeyRepository } from './infrastructure/typeorm-access.repositories';
import { FirewallRulesController, ServerFirewallController } from './interface/http/firewall-rules.controller';
import { SshKeysController } from './interface/http/ssh-keys.controller';

/**
 * SSH keys and firewall rules (servers.md "SSH keys and firewall rules"). Exports ServerAccess,
 * what the Servers module needs: the keys behind ssh_key_ids, the rules in force, and the removal
 * of a deleted server's own rules; and FirewallEnforcement, which puts the rules in force at the
 * compute provider.
 */
@Module({
  imports: [IdempotencyModule, ComputeProviderModule],
  controllers: [SshKeysController, FirewallRulesController, ServerFirewallController],
  providers: [
    { provide: SshKeyRepository, useClass: TypeOrmSshKeyRepository },
    { provide: FirewallRuleRepository, useClass: TypeOrmFirewallRuleRepository },
    { provide: ServerDirectory, useClass: TypeOrmServerDirectory },
    CreateSshKey,
    RenameSshKey,
    DeleteSshKey,
    SshKeyQueries,
    CreateFirewallRule,
    DeleteFirewallRule,
    FirewallQueries,
    ServerAccess,
    { provide: FirewallPushes, useClass: TypeOrmFirewallPushes },
    FirewallEnforcement,
  ],
  exports: [ServerAccess, ServerDirectory, FirewallEnforcement],
})
export class AccessModule {}
