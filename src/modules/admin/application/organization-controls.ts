import { Injectable } from '@nestjs/common';
import { Db } from '../../../shared/database/transaction';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { DomainError, invalidRequest, notFound } from '../../../shared/kernel/errors/domain-error';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { DEFAULT_ORGANIZATION_LIMITS, OrganizationPolicy } from '../../auth/application/organization-policy';
import { StaffPrincipal } from '../domain/staff';

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
    private readonly db: Db,
    private readonly audit: AuditTrail,
    private readonly policy: OrganizationPolicy,
    private readonly clock: Clock,
  ) {}

  /** `{servers?, api_keys?, firewall_rules?}`: a whole number 0-100000, or null for the default; below what is in use: 409 conflict. */
  async setLimits(orgId: string, body: Record<string, unknown>, actor: Actor): Promise<void> {
    const changes: { field: (typeof LIMIT_FIELDS)[number][0]; column: string; value: number | null }[] = [];
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
      const [usage] = await this.db.query<{ servers: number; api_keys: number; firewall_rules: number }>(
        `SELECT (SELECT count(*) FROM servers WHERE org_id = $1 AND deleted_at IS NULL)::int AS servers,
                (SELECT count(*) FROM api_keys WHERE org_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2))::int AS api_keys,
                (SELECT count(*) FROM firewall_rules WHERE org_id = $1)::int AS firewall_rules`,
        [orgId, now],
      );
      for (const c of changes) {
        const effective = c.value ?? DEFAULTS[c.field];
        if (effective < usage[c.field]) {
          throw new DomainError('conflict', `The organization uses ${usage[c.field]} ${c.field.replace('_', ' ')}; a limit of ${effective} is below that`, {
            field: c.field,
            in_use: usage[c.field],
          });
        }
      }
      await this.db.query(`UPDATE organizations SET ${changes.map((c, i) => `${c.column} = $${i + 2}`).join(', ')} WHERE id = $1`, [orgId, ...changes.map((c) => c.value)]);
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
      if (current.suspended_at === null) {
        await this.db.query('UPDATE organizations SET suspended_at = $2, suspension_reason = $3 WHERE id = $1', [orgId, this.clock.now(), text]);
        await this.audit.record({ orgId, actorType: 'staff', actorId: actor.role, action: 'organization.suspend', targetId: orgId, ipAddress: null, data: { reason: text, justification: actor.justification } });
      }
    });
    this.policy.forget(orgId);
  }

  async unsuspend(orgId: string, actor: Actor): Promise<void> {
    await this.uow.run(async () => {
      const current = await this.lock(orgId);
      if (current.suspended_at !== null) {
        await this.db.query('UPDATE organizations SET suspended_at = NULL, suspension_reason = NULL WHERE id = $1', [orgId]);
        await this.audit.record({ orgId, actorType: 'staff', actorId: actor.role, action: 'organization.unsuspend', targetId: orgId, ipAddress: null, data: { justification: actor.justification } });
      }
    });
    this.policy.forget(orgId);
  }

  private async lock(orgId: string): Promise<{ suspended_at: Date | null }> {
    const [row] = await this.db.query<{ suspended_at: Date | null }>('SELECT suspended_at FROM organizations WHERE id = $1 FOR NO KEY UPDATE', [orgId]);
    if (!row) throw notFound(`Organization ${orgId} not found`);
    return row;
  }
}
