/** What staff set on an organization, as stored: a limit override or null (the default). */
export interface StoredOrganizationLimits {
  serverLimit: number | null;
  apiKeyLimit: number | null;
  firewallRuleLimit: number | null;
}

/** The organization's limits overrides and suspension as the database holds them. */
export abstract class OrganizationSettings {
  /** Read inside the caller's transaction (under its lock of the organization); undefined for an unknown organization. */
  abstract limits(orgId: string): Promise<StoredOrganizationLimits | undefined>;
  abstract isSuspended(orgId: string): Promise<boolean>;
}
