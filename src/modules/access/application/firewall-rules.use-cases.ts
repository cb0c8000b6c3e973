import { OrganizationPolicy, limitsOf } from '../../auth/application/organization-policy';
import { Injectable, Optional } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { DomainError, invalidRequest, notFound } from '../../../shared/kernel/errors/domain-error';
import { newId } from '../../../shared/kernel/ids/ids';
import { decodeCursor, encodeCursor, parseLimit } from '../../../shared/kernel/pagination/cursor';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { Actor } from '../../auth/application/api-keys.use-cases';
import {
  DIRECTIONS, Direction, FirewallRule, PROTOCOLS, Protocol, RuleInput, canonicalPort, canonicalRule, parseCidr, ruleDigest, verdict,
} from '../domain/firewall-rule';
import { FirewallRuleRepository, ServerDirectory } from './access.ports';
import { FirewallEnforcement } from './firewall-enforcement';

/** The canonical rule as the audit entry and the API show it (snake_case members). */
export function ruleData(rule: FirewallRule) {
  return {
    direction: rule.direction, protocol: rule.protocol, port: rule.port, sources: rule.sources, destinations: rule.destinations,
    server_id: rule.serverId, description: rule.description,
  };
}

const auditOf = (actor: Actor) => ({ actorType: actor.type, actorId: actor.id, ipAddress: actor.ip, targetType: 'firewall_rule' });

/** A create request validated and in canonical form (400 comes before the Idempotency-Key's checks). */
export type ValidRule = ReturnType<typeof canonicalRule>;

export function validateNewRule(body: RuleInput): ValidRule {
  return canonicalRule(body);
}

@Injectable()
export class CreateFirewallRule {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly rules: FirewallRuleRepository,
    private readonly servers: ServerDirectory,
    private readonly audit: AuditTrail,
    /** Absent where the use case is built by hand (unit tests): the rules then live in the table only, which is all the simulated provider reads. */
    @Optional() private readonly enforcement?: FirewallEnforcement,
    @Optional() private readonly policy?: OrganizationPolicy,
  ) {}

  /**
   * 400 (the member named), 404 (server_id not a live server of the organization), then under the
   * organization's lock 409 conflict (the same canonical rule: details.existing_id), 409
   * quota_exceeded (100 rules). The unique digest holds it on every process. The servers it applies
   * to are marked in the same transaction and their rules pushed to the provider after the commit.
   */
  async execute(orgId: string, canonical: ValidRule, actor: Actor): Promise<FirewallRule> {
    const digest = ruleDigest(canonical);
    let marked: string[] = [];
    const created = await this.uow.run(async () => {
      if (canonical.serverId !== null) {
        const server = await this.servers.find(orgId, canonical.serverId, { share: true });
        if (!server || !server.live) throw notFound(`Server ${canonical.serverId} not found`);
      }
      await this.rules.lockOrganization(orgId);
      const same = await this.rules.findByDigest(orgId, digest);
      if (same) throw duplicateRule(same);
      const limit = (await limitsOf(this.policy, orgId)).firewallRules;
      if ((await this.rules.count(orgId)) >= limit) {
        throw new DomainError('quota_exceeded', `An organization may hold at most ${limit} firewall rules; delete one first`, { limit });
      }
      const rule = await this.rules.insert({ ...canonical, id: newId('fwr'), orgId, digest });
      if (!rule) {
        const holder = await this.rules.findByDigest(orgId, digest);
        throw holder ? duplicateRule(holder) : new DomainError('conflict', 'The same firewall rule exists already');
      }
      // The servers' marks before the audit entry: the audit row is the last write (its
      // organization's audit head stays locked until commit), so no lock is awaited while holding it.
      marked = (await this.enforcement?.mark(orgId, rule.serverId)) ?? [];
      await this.audit.record({ orgId, ...auditOf(actor), action: 'firewall_rule.create', targetId: rule.id, data: ruleData(rule) });
      return rule;
    });
    if (marked.length) await this.enforcement?.pushPending(marked.length, marked);
    return created;
  }
}

const duplicateRule = (existing: FirewallRule): DomainError =>
  new DomainError('conflict', `Firewall rule ${existing.id} is the same rule (in canonical form)`, { existing_id: existing.id });

@Injectable()
export class DeleteFirewallRule {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly rules: FirewallRuleRepository,
    private readonly audit: AuditTrail,
    /** Absent where the use case is built by hand (unit tests): the rules then live in the table only, which is all the simulated provider reads. */
    @Optional() private readonly enforcement?: FirewallEnforcement,
  ) {}

  /** 204; in force at once (the simulator reads the table; host agents get the new set pushed after the commit); again: 404. */
  async execute(orgId: string, id: string, actor: Actor): Promise<void> {
    const marked = await this.uow.run(async () => {
      const rule = await this.rules.delete(orgId, id);
      if (!rule) throw notFound(`Firewall rule ${id} not found`);
      // The marks first, the audit entry last (as at creation).
      const marks = (await this.enforcement?.mark(orgId, rule.serverId)) ?? [];
      await this.audit.record({ orgId, ...auditOf(actor), action: 'firewall_rule.delete', targetId: id, data: ruleData(rule) });
      return marks;
    });
    if (marked.length) await this.enforcement?.pushPending(marked.length, marked);
  }
}

/** The query of GET /v1/servers/{id}/firewall that asks for a verdict. */
export interface PacketQuery {
  direction?: string;
  protocol?: string;
  address?: string;
  port?: string;
}

export interface EffectiveFirewall {
  serverId: string;
  inboundDefault: 'deny';
  outboundDefault: 'allow' | 'deny';
  rules: FirewallRule[];
  verdict?: { allowed: boolean; ruleId: string | null };
}

@Injectable()
export class FirewallQueries {
  constructor(
    private readonly rules: FirewallRuleRepository,
    private readonly servers: ServerDirectory,
  ) {}

  async list(orgId: string, input: { limit?: string; cursor?: string; server_id?: string }): Promise<{ rules: FirewallRule[]; nextCursor: string | null }> {
    const limit = parseLimit(input.limit);
    const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor);
    const page = await this.rules.list(orgId, input.server_id, limit, after);
    return { rules: page.items, nextCursor: page.next && encodeCursor(page.next) };
  }

  async get(orgId: string, id: string): Promise<FirewallRule> {
    const rule = await this.rules.get(orgId, id);
    if (!rule) throw notFound(`Firewall rule ${id} not found`);
    return rule;
  }

  /**
   * The rules in force on a server (organization-wide and its own, oldest first), the defaults,
   * and with a whole packet (direction, protocol, address, port for tcp and udp) the verdict.
   * A deleted server stays readable: the organization-wide rules (its own were deleted with it).
   */
  async effective(orgId: string, serverId: string, query: PacketQuery): Promise<EffectiveFirewall> {
    const packet = parsePacket(query);
    const server = await this.servers.find(orgId, serverId);
    if (!server) throw notFound(`Server ${serverId} not found`);
    const rules = await this.rules.inForce(orgId, serverId);
    const out: EffectiveFirewall = {
      serverId,
      inboundDefault: 'deny',
      outboundDefault: rules.some((r) => r.direction === 'out') ? 'deny' : 'allow',
      rules,
    };
    if (packet) out.verdict = verdict(rules, packet);
    return out;
  }
}

/** A packet from the query, or none when no member of it is given; some but not all: 400 naming the first missing. */
function parsePacket(q: PacketQuery) {
  const given = [q.direction, q.protocol, q.address, q.port].some((v) => v !== undefined);
  if (!given) return undefined;
  const partial = 'a verdict needs direction, protocol, address and (tcp, udp) port';
  const need = (field: string, value: unknown) => {
    if (value === undefined) throw invalidRequest(`${field} is required: ${partial}`, { field });
  };
  need('direction', q.direction);
  if (!(DIRECTIONS as readonly string[]).includes(q.direction!)) throw invalidRequest('direction must be in or out', { field: 'direction' });
  need('protocol', q.protocol);
  if (!(PROTOCOLS as readonly string[]).includes(q.protocol!)) throw invalidRequest('protocol must be tcp, udp or icmp', { field: 'protocol' });
  need('address', q.address);
  const address = parseCidr(q.address, 'address');
  if (address.prefix !== (address.kind === 'ipv4' ? 32 : 128)) throw invalidRequest('address must be one IPv4 or IPv6 address, not a network', { field: 'address' });
  let port: number | null = null;
  if (q.protocol === 'icmp') {
    if (q.port !== undefined) throw invalidRequest('port must be absent for icmp', { field: 'port' });
  } else {
    need('port', q.port);
    const text = canonicalPort(q.port);
    if (text.includes('-')) throw invalidRequest('port must be one port from 1 to 65535, not a range', { field: 'port' });
    port = Number(text);
  }
  return { direction: q.direction as Direction, protocol: q.protocol as Protocol, address, port };
}
