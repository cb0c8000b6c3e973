import { DomainError } from '../../../shared/kernel/errors/domain-error';
import { Money, PricePair } from '../../../shared/kernel/money/money';
import { Labels } from '../../prepaid/domain/labels';
import { DeletedReason } from '../../prepaid/domain/term';
import { AutoRenew } from '../../prepaid/domain/auto-renew';

export const SERVER_STATUSES = ['creating', 'running', 'stopping', 'stopped', 'starting', 'rebooting', 'suspended', 'deleting', 'deleted'] as const;
export type ServerStatus = (typeof SERVER_STATUSES)[number];

/** The hostname rule: 1-63 letters, digits, "." and "-", alphanumeric first and last. */
export const SERVER_NAME_PATTERN = /^[A-Za-z0-9]([A-Za-z0-9.-]{0,61}[A-Za-z0-9])?$/;
export const SERVER_NAME_RULE = '1 to 63 letters, digits, "." or "-", starting and ending with a letter or digit';

/** A server's address in one of its organization's private networks. */
export interface PrivateNetworkAddress {
  networkId: string;
  ip: string;
}

/**
 * A server (servers.md "Server and buying"). A seeded server has no plan: `plan` and everything
 * frozen with a purchase (specs, image, term, billing, price, expiry) are null.
 */
export interface Server {
  id: string;
  orgId: string;
  name: string;
  status: ServerStatus;
  regionId: string;
  zoneId: string;
  plan: string | null;
  vcpus: number | null;
  memoryGb: number | null;
  diskGb: number | null;
  image: string | null;
  ipv4: string | null;
  /** The first address of the server's own /64 out of its region's IPv6 prefix (null once deleted). */
  ipv6?: string | null;
  /** Its private network attachments (attached or being detached), by network id. */
  privateNetworks?: PrivateNetworkAddress[];
  termMonths: number | null;
  billing: Money | null;
  price: PricePair | null;
  expiresAt: Date | null;
  labels: Labels;
  deleteProtection: boolean;
  /** Its live volumes, by id. */
  volumeIds: string[];
  /** The SSH keys given at purchase, by id (a key deleted since keeps its id here). */
  sshKeyIds: string[];
  createdAt: Date;
  deletedAt: Date | null;
  /** Set while suspended (terms.md): when its term ended, and when it is released unless renewed. */
  suspendedAt?: Date | null;
  releaseAt?: Date | null;
  /** While suspended: whether it ran when its term ended (a renewal powers it on again only then). Not shown. */
  powerBefore?: 'running' | 'stopped' | null;
  /** Why it was deleted (null while live, and for servers deleted before reasons were kept). */
  deletedReason?: DeletedReason | null;
  /**
   * When the reconciliation sweep found this live server's instance gone at the compute provider
   * (null otherwise; cleared when the instance is seen again). Not shown in the API.
   */
  instanceMissingSince: Date | null;
  /** Automatic renewal (terms.md); absent: off. */
  autoRenew?: AutoRenew;
  /** Its reserved address (reserved-ips), reachable beside its own ipv4; null or absent when none. */
  reservedIp?: { id: string; ip: string } | null;
  /** vCPUs a plan change in flight has reserved in the region (0 otherwise). Not shown. */
  resizeReservedVcpus?: number;
}

/**
 * Whether the server's instance is missing at the compute provider (the reconciliation sweep
 * flagged it): power actions (start, stop, reboot) and renewal are refused with 409 invalid_state
 * while it is; reads, edits and delete still work.
 */
export function instanceMissing(server: Pick<Server, 'instanceMissingSince' | 'deletedAt'>): boolean {
  return server.deletedAt === null && server.instanceMissingSince !== null;
}

/** 409 invalid_state for an action refused because the server's instance is missing at the provider. */
export const instanceMissingError = (server: Pick<Server, 'id' | 'instanceMissingSince'>): DomainError =>
  new DomainError('invalid_state', `Server ${server.id} has no instance at the compute provider`, {
    instance_missing_since: server.instanceMissingSince?.toISOString() ?? null,
  });

/** GET /v1/servers filters; `status` absent: every status but deleted. */
export interface ServerFilter {
  status?: ServerStatus;
  regionId?: string;
  zoneId?: string;
  name?: string;
  labels: [string, string][];
  /** Whether automatic renewal is on. */
  autoRenew?: boolean;
}

/** 409 conflict: the name is held by another live server of the organization (named when known). */
export const nameTaken = (name: string, existingId: string | undefined): DomainError =>
  new DomainError('conflict', `Server name ${name} is taken by another server of the organization`, existingId ? { existing_id: existingId } : {});
