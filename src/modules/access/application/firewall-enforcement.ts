import { Injectable, Logger } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { DomainError } from '../../../shared/kernel/errors/domain-error';
import { ComputeGateway } from '../../servers/application/compute-gateway';
import { ProviderFirewallRule } from '../../servers/application/compute-provider.port';
import { FirewallRule } from '../domain/firewall-rule';
import { FirewallPushes, FirewallRuleRepository } from './access.ports';

/** A rule as the compute provider enforces it: its sources (in) or destinations (out) as `addresses`. */
export const providerRule = (r: FirewallRule): ProviderFirewallRule => ({
  direction: r.direction, protocol: r.protocol, port: r.port, addresses: r.direction === 'in' ? r.sources : r.destinations,
});

/**
 * Puts the firewall rules in force at the compute provider (servers.md "Semantics"). A rule's
 * create or delete marks the servers it applies to in its own transaction (FirewallPushes), then
 * pushes them at once after the commit; what could not be pushed then (the provider unreachable, the
 * process gone) is pushed by the sweep every FIREWALL_SYNC_INTERVAL_MS. A push sends the whole set
 * in force (organization-wide and the server's own), so pushes are idempotent and the latest wins.
 * A server without an instance (still creating, or deleted) is cleared: its creation pushes its
 * rules when it boots. The simulated provider judges packets from the table itself (its push does
 * nothing); host agents apply them as nftables rulesets.
 */
@Injectable()
export class FirewallEnforcement {
  private readonly logger = new Logger('FirewallEnforcement');

  constructor(
    private readonly uow: UnitOfWork,
    private readonly pushes: FirewallPushes,
    private readonly rules: FirewallRuleRepository,
    private readonly compute: ComputeGateway,
  ) {}

  /** In the change's transaction: the server (or, null, every live server of the organization) needs its rules pushed. */
  mark(orgId: string, serverId: string | null): Promise<string[]> {
    return this.pushes.mark(orgId, serverId);
  }

  /** The server's rules in force, pushed now (a step of vm.create: a failure is the step's). */
  async applyNow(orgId: string, serverId: string): Promise<void> {
    // One statement (its own snapshot): no transaction of its own, no BEGIN and COMMIT around it.
    const rules = await this.rules.inForce(orgId, serverId);
    await this.compute.applyFirewall({ serverId, rules: rules.map(providerRule) });
  }

  /** Pushes the marked servers (the ones given, else the oldest `limit`); returns how many were cleared. Never throws. */
  async pushPending(limit = 100, serverIds?: string[], stopping: () => boolean = () => false): Promise<number> {
    let cleared = 0;
    let marked: { serverId: string; orgId: string; mark: string }[];
    try {
      marked = await this.uow.run(() => this.pushes.pending(limit, serverIds));
    } catch (err) {
      this.logger.warn({ msg: 'firewall pushes could not be read', reason: err instanceof Error ? err.message : String(err) });
      return 0;
    }
    for (const m of marked) {
      if (stopping()) break;
      try {
        await this.applyNow(m.orgId, m.serverId);
      } catch (err) {
        if (!(err instanceof DomainError)) {
          this.logger.warn({ msg: 'firewall rules not applied yet; the sweep tries again', server_id: m.serverId, reason: err instanceof Error ? err.message : String(err) });
          continue;
        }
        // No instance to apply them to (creating or deleted): its boot applies them.
      }
      await this.uow.run(() => this.pushes.clear(m.serverId, m.mark));
      cleared += 1;
    }
    return cleared;
  }
}
