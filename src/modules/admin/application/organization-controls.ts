import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { DomainError, invalidRequest, notFound } from '../../../shared/kernel/errors/domain-error';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { DEFAULT_ORGANIZATION_LIMITS, OrganizationPolicy } from '../../auth/application/organization-policy';
import { StaffPrincipal } from '../domain/staff';
import { OrganizationDetail, OrganizationSummary, OrganizationsAdmin } from './organizations-admin.port';

const DEFAULTS = { servers: DEFAULT_ORGANIZATION_LIMITS.servers, api_keys: DEFAULT_ORGANIZATION_LIMITS.apiKeys, firewall_rules: DEFAULT_ORGANIZATION_LIMITS.firewallRules };
type Actor = StaffPrincipal & { justification: string | null };
const LIMIT_FIELDS = [
  ['servers', 'server_limit'],
  ['api_keys', 'api_key_limit'],
  ['firewall_rules', 'firewall_rule_limit'],
] as const;

/**
 * What operators decide per organization (admin.md "Organizations"): limits overrides and the
 * suspension of writes. Each change is one transaction under the organization's row lock (the
 * limit checks of purchases and creations take the same lock), audited in the organization's log
 * with actor staff.
 */
@Injectable()
export class OrganizationControls {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly organizations: OrganizationsAdmin,
    private readonly audit: AuditTrail,
    private readonly policy: OrganizationPolicy,
    private readonly clock: Clock,
  ) {}

  /** `{servers?, api_keys?, firewall_rules?}`: a whole number 0-100000, or null for the default; below what is in use: 409 conflict. */
  async setLimits(orgId: string, body: Record<string, unknown>, actor: Actor): Promise<void> {
    const changes: { field: (typeof LIMIT_FIELDS)[number][0]; column: (typeof LIMIT_FIELDS)[number][1]; value: number | null }[] = [];
    for (const [field, column] of LIMIT_FIELDS) {
      const value = body[field];
      if (value === undefined) continue;
      if (value !== null && (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 100_000)) {
        throw invalidRequest(`${field} must be a whole number from 0 to 100000, or null for the default`, { field });
      }
      changes.push({ field, column, value: value as number | null });
    }
    if (changes.length === 0) throw invalidRequest('Give at least one of servers, api_keys, firewall_rules', { field: 'servers' });
    await this.uow.run(async () => {
      await this.lock(orgId);
      const before = await this.policy.limits(orgId);
      const now = this.clock.now();
      const usage = await this.organizations.usage(orgId, now);
      for (const c of changes) {
        const effective = c.value ?? DEFAULTS[c.field];
        if (effective < usage[c.field]) {
          throw new DomainError('conflict', `The organization uses ${usage[c.field]} ${c.field.replace('_', ' ')}; a limit of ${effective} is below that`, {
            field: c.field,
            in_use: usage[c.field],
          });
        }
      }
      await this.organizations.setLimits(orgId, changes);
      const after = await this.policy.limits(orgId);
      await this.audit.record({
        orgId, actorType: 'staff', actorId: actor.role, action: 'organization.limits_change', targetId: orgId, ipAddress: null,
        data: {
          before: { servers: before.servers, api_keys: before.apiKeys, firewall_rules: before.firewallRules },
          after: { servers: after.servers, api_keys: after.apiKeys, firewall_rules: after.firewallRules },
          justification: actor.justification,
        },
      });
    });
  }

  async suspend(orgId: string, reason: unknown, actor: Actor): Promise<void> {
    const text = typeof reason === 'string' ? reason.trim() : '';
    if (text.length < 1 || text.length > 500) throw invalidRequest('reason must be 1 to 500 characters', { field: 'reason' });
    await this.uow.run(async () => {
      const current = await this.lock(orgId);
      if (current.suspendedAt === null) {
        await this.organizations.setSuspension(orgId, this.clock.now(), text);
        await this.audit.record({ orgId, actorType: 'staff', actorId: actor.role, action: 'organization.suspend', targetId: orgId, ipAddress: null, data: { reason: text, justification: actor.justification } });
      }
    });
    this.policy.forget(orgId);
  }

  async unsuspend(orgId: string, actor: Actor): Promise<void> {
    await this.uow.run(async () => {
      const current = await this.lock(orgId);
      if (current.suspendedAt !== null) {
        await this.organizations.setSuspension(orgId, null, null);
        await this.audit.record({ orgId, actorType: 'staff', actorId: actor.role, action: 'organization.unsuspend', targetId: orgId, ipAddress: null, data: { justification: actor.justification } });
      }
    });
    this.policy.forget(orgId);
  }

  private async lock(orgId: string): Promise<{ suspendedAt: Date | null }> {
    const row = await this.organizations.lockForChange(orgId);
    if (!row) throw notFound(`Organization ${orgId} not found`);
    return row;
  }

  /** Search and detail for staff (the reads of the organizations routes). */
  search(q: string | undefined, limit: number, afterId: string | undefined): Promise<OrganizationSummary[]> {
    return this.organizations.search(q, limit, afterId);
  }

  detail(id: string): Promise<OrganizationDetail | undefined> {
    return this.organizations.detail(id);
  }

  exists(id: string): Promise<boolean> {
    return this.organizations.exists(id);
  }
}

export type { OrganizationDetail, OrganizationSummary };
