export interface OrganizationSummary {
  id: string;
  name: string;
  createdAt: Date;
  suspendedAt: Date | null;
}

export interface OrganizationLimits {
  servers: number | null;
  apiKeys: number | null;
  firewallRules: number | null;
}

export interface OrganizationDetail extends OrganizationSummary {
  suspensionReason: string | null;
  members: { userId: string; email: string; role: string; joinedAt: Date }[];
  balances: { currency: string; available: string; reserved: string }[];
  liveServers: number;
  liveVolumes: number;
  /** The overrides (null: the default). */
  limits: OrganizationLimits;
  usage: { servers: number; apiKeys: number; firewallRules: number };
}

/** What staff reads of organizations (search, detail). */
export abstract class OrganizationsAdmin {
  /** By id (exact), name prefix (case-insensitive) or a member's email (exact); ordered by id, after `afterId`. */
  abstract search(q: string | undefined, limit: number, afterId: string | undefined): Promise<OrganizationSummary[]>;
  abstract detail(id: string): Promise<OrganizationDetail | undefined>;
  abstract exists(id: string): Promise<boolean>;
  /** Locks the organization's row for a change (FOR NO KEY UPDATE) and reads its suspension; undefined when unknown. */
  abstract lockForChange(id: string): Promise<{ suspendedAt: Date | null } | undefined>;
  /** What the organization uses now, against its limits. */
  abstract usage(id: string, now: Date): Promise<{ servers: number; api_keys: number; firewall_rules: number }>;
  /** Sets limit overrides (null: the default) by column. */
  abstract setLimits(id: string, changes: { column: 'server_limit' | 'api_key_limit' | 'firewall_rule_limit'; value: number | null }[]): Promise<void>;
  /** Suspends (`at` and a reason) or lifts the suspension (nulls). */
  abstract setSuspension(id: string, at: Date | null, reason: string | null): Promise<void>;
}
