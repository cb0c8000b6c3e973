import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { invalidRequest } from '../../../shared/kernel/errors/domain-error';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { Actor } from '../../auth/application/api-keys.use-cases';
import { FirewallRule } from '../domain/firewall-rule';
import { FirewallRuleRepository, SshKeyRepository } from './access.ports';
import { ruleData } from './firewall-rules.use-cases';

/** A public key as copied into a server's creation (operation and provider call). */
export interface InjectedKey {
  id: string;
  name: string;
  fingerprint: string;
  publicKey: string;
}

/**
 * What the Servers module needs of SSH keys and firewall rules (servers.md): the public keys
 * behind `ssh_key_ids` when a server is bought, the rules in force when a packet is judged, and
 * the removal of a server's own rules when it is deleted. Runs in the caller's transaction.
 */
@Injectable()
export class ServerAccess {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly keys: SshKeyRepository,
    private readonly rules: FirewallRuleRepository,
    private readonly audit: AuditTrail,
  ) {}

  /**
   * The keys of `ids` (≤ 10 distinct) in the order given; an id that is no key of the
   * organization is 400 naming `ssh_key_ids[i]` (servers.md "Server and buying").
   */
  async resolveSshKeys(orgId: string, ids: unknown): Promise<InjectedKey[]> {
    if (ids === undefined || ids === null) return [];
    if (!Array.isArray(ids) || ids.length > 10) throw invalidRequest('ssh_key_ids must be a list of at most 10 SSH key ids', { field: 'ssh_key_ids' });
    ids.forEach((id, i) => {
      if (typeof id !== 'string' || id.length === 0) throw invalidRequest(`ssh_key_ids[${i}] must be an SSH key id`, { field: `ssh_key_ids[${i}]` });
      if (ids.indexOf(id) !== i) throw invalidRequest(`ssh_key_ids[${i}] repeats ${id}: the ids must be distinct`, { field: `ssh_key_ids[${i}]` });
    });
    const found = new Map((await this.keys.findMany(orgId, ids as string[])).map((k) => [k.id, k]));
    return (ids as string[]).map((id, i) => {
      const key = found.get(id);
      if (!key) throw invalidRequest(`ssh_key_ids[${i}]: ${id} is no SSH key of the organization`, { field: `ssh_key_ids[${i}]` });
      return { id: key.id, name: key.name, fingerprint: key.fingerprint, publicKey: key.publicKey };
    });
  }

  /** The rules in force on the server: organization-wide and its own, oldest first. */
  rulesInForce(orgId: string, serverId: string): Promise<FirewallRule[]> {
    return this.rules.inForce(orgId, serverId);
  }

  /** Deletes the server's own rules, each audited firewall_rule.delete with data.reason "server_deleted". */
  async deleteServerRules(orgId: string, serverId: string, actor: Actor): Promise<FirewallRule[]> {
    return this.uow.run(async () => {
      const deleted = await this.rules.deleteOfServer(orgId, serverId);
      for (const rule of deleted) {
        await this.audit.record({
          orgId, actorType: actor.type, actorId: actor.id, ipAddress: actor.ip, targetType: 'firewall_rule',
          action: 'firewall_rule.delete', targetId: rule.id, data: { ...ruleData(rule), reason: 'server_deleted' },
        });
      }
      return deleted;
    });
  }
}
