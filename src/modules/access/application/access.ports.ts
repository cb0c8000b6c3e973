import { Page, PageCursor } from '../../../shared/kernel/pagination/cursor';
import { CanonicalRule, FirewallRule } from '../domain/firewall-rule';
import { SshKey } from '../domain/ssh-key';

/** The organization's SSH keys. Unique per organization: fingerprint, name (unique indexes). */
export abstract class SshKeyRepository {
  /**
   * Locks the organization row for the rest of the transaction: creates of SSH keys and firewall
   * rules in one organization are counted one after the other, on every server process.
   */
  abstract lockOrganization(orgId: string): Promise<void>;
  abstract count(orgId: string): Promise<number>;
  abstract findBy(orgId: string, column: 'fingerprint' | 'name', value: string): Promise<SshKey | undefined>;
  /** Inserts; undefined when the fingerprint or the name is taken (ON CONFLICT DO NOTHING: the race's loser). */
  abstract insert(key: SshKey): Promise<SshKey | undefined>;
  abstract get(orgId: string, id: string): Promise<SshKey | undefined>;
  abstract list(orgId: string, filter: { fingerprint?: string; name?: string }, limit: number, after?: PageCursor): Promise<Page<SshKey>>;
  /** Renames; undefined when the key is gone; throws DomainError conflict (details.existing_id) when the name is taken. */
  abstract rename(orgId: string, id: string, name: string): Promise<SshKey | undefined>;
  /** Deletes and returns the deleted key; undefined when there was none. */
  abstract delete(orgId: string, id: string): Promise<SshKey | undefined>;
  /** The keys of `ids` that belong to the organization. */
  abstract findMany(orgId: string, ids: string[]): Promise<SshKey[]>;
}

export interface NewFirewallRule extends CanonicalRule {
  id: string;
  orgId: string;
  description: string | null;
  digest: string;
}

/** The organization's firewall rules, in canonical form; one canonical rule once (unique digest). */
export abstract class FirewallRuleRepository {
  abstract lockOrganization(orgId: string): Promise<void>;
  abstract count(orgId: string): Promise<number>;
  abstract findByDigest(orgId: string, digest: string): Promise<FirewallRule | undefined>;
  /** Inserts; undefined when the same canonical rule exists (ON CONFLICT DO NOTHING). */
  abstract insert(rule: NewFirewallRule): Promise<FirewallRule | undefined>;
  abstract get(orgId: string, id: string): Promise<FirewallRule | undefined>;
  /** Oldest first; with serverId only that server's own rules. */
  abstract list(orgId: string, serverId: string | undefined, limit: number, after?: PageCursor): Promise<Page<FirewallRule>>;
  /** The rules in force on a server: the organization-wide ones and its own, oldest first. */
  abstract inForce(orgId: string, serverId: string): Promise<FirewallRule[]>;
  abstract delete(orgId: string, id: string): Promise<FirewallRule | undefined>;
  /** Deletes the rules naming this server and returns them. */
  abstract deleteOfServer(orgId: string, serverId: string): Promise<FirewallRule[]>;
}

/** What the firewall needs to know of a server: whether it is one of the organization's, and live. */
export interface ServerEntry {
  id: string;
  /** False once deleted. */
  live: boolean;
}

/**
 * Port: the organization's servers as seen by SSH keys and firewall rules. Implemented on the
 * servers table; the Servers module may provide its own adapter.
 */
export abstract class ServerDirectory {
  /** With `share`, inside a transaction: the row is locked against deletion until the transaction ends. */
  abstract find(orgId: string, serverId: string, options?: { share?: boolean }): Promise<ServerEntry | undefined>;
}

/**
 * The servers whose firewall changed and is not yet applied at the compute provider
 * (firewall_pushes): marked in the transaction of the change, cleared once applied, so a change
 * whose push failed (the provider unreachable, the process gone) is applied by a later sweep.
 */
export abstract class FirewallPushes {
  /** Marks the server (or, with null, every live server of the organization) in the caller's transaction. */
  abstract mark(orgId: string, serverId: string | null): Promise<string[]>;
  /** The oldest marked servers (of `serverIds` only, when given) with their organization and mark. */
  abstract pending(limit: number, serverIds?: string[]): Promise<{ serverId: string; orgId: string; mark: string }[]>;
  /** Clears the mark if it is still the one read (a newer change stays marked). */
  abstract clear(serverId: string, mark: string): Promise<void>;
}
