import { Injectable } from '@nestjs/common';
import { DomainError } from '../../../shared/kernel/errors/domain-error';
import { OrganizationSettings } from './organization-settings.port';

/** The per-organization limits' defaults (admin.md: overrides per organization, null restores these). */
export const DEFAULT_ORGANIZATION_LIMITS = { servers: 25, apiKeys: 20, firewallRules: 100 } as const;

export interface OrganizationLimitValues {
  servers: number;
  apiKeys: number;
  firewallRules: number;
}

/** How long a process trusts what it read of an organization's suspension (a suspension takes effect everywhere within it). */
export const SUSPENSION_CACHE_MS = 1_000;

/** 403 forbidden for a suspended organization's writes (admin.md "Organizations"). */
export const organizationSuspended = (orgId: string): DomainError =>
  new DomainError('forbidden', `Organization ${orgId} is suspended: its resources and reads remain, changes are refused; contact support`, {
    reason: 'organization_suspended',
  });

/**
 * What staff decides per organization and the customer routes obey: the limits (servers, API
 * keys, firewall rules; the defaults unless overridden) and the suspension of writes. Limits are
 * read inside the caller's transaction, under its lock of the organization (so they are exact);
 * the suspension is read at most once a second per process and organization.
 */
@Injectable()
export class OrganizationPolicy {
  private readonly suspended = new Map<string, { until: number; value: Promise<boolean> }>();

  constructor(private readonly settings: OrganizationSettings) {}

  async limits(orgId: string): Promise<OrganizationLimitValues> {
    const row = await this.settings.limits(orgId);
    return {
      servers: serverLimitOf(row?.serverLimit ?? null),
      apiKeys: row?.apiKeyLimit ?? DEFAULT_ORGANIZATION_LIMITS.apiKeys,
      firewallRules: row?.firewallRuleLimit ?? DEFAULT_ORGANIZATION_LIMITS.firewallRules,
    };
  }

  /** 403 organization_suspended when the organization is suspended (known within SUSPENSION_CACHE_MS on every process). */
  async assertWritable(orgId: string): Promise<void> {
    if (await this.isSuspended(orgId)) throw organizationSuspended(orgId);
  }

  isSuspended(orgId: string): Promise<boolean> {
    const now = performance.now();
    const cached = this.suspended.get(orgId);
    if (cached && cached.until > now) return cached.value;
    const value = this.settings.isSuspended(orgId);
    if (this.suspended.size > 10_000) this.suspended.clear();
    this.suspended.set(orgId, { until: now + SUSPENSION_CACHE_MS, value });
    value.catch(() => this.suspended.delete(orgId));
    return value;
  }

  /** This process forgets what it read (a suspension or its lifting made here applies at once here). */
  forget(orgId: string): void {
    this.suspended.delete(orgId);
  }
}

/** The organization's limits through the policy, or the defaults where none is wired (unit tests of a use case alone). */
/** The server limit in force for an organization whose own limit (organizations.server_limit) is `stored` (null: the default). */
export function serverLimitOf(stored: number | null): number {
  return stored ?? DEFAULT_ORGANIZATION_LIMITS.servers;
}

export async function limitsOf(policy: OrganizationPolicy | undefined, orgId: string): Promise<OrganizationLimitValues> {
  return policy ? policy.limits(orgId) : { ...DEFAULT_ORGANIZATION_LIMITS };
}
