import { Page, PageCursor } from '../../../shared/kernel/pagination/cursor';
import { Labels } from '../../prepaid/domain/labels';
import { Network } from '../domain/network';

/** A server's attachment as the database holds it: `attaching` until its operation's step commits, `detaching` once a detach is accepted. */
export type AttachmentStatus = 'attaching' | 'attached' | 'detaching';

export interface Attachment {
  serverId: string;
  networkId: string;
  ip: string;
  status: AttachmentStatus;
}

export interface NetworkFilter {
  regionId?: string;
  labels: [string, string][];
}

/** The private networks and the servers' attachments, in the caller's transaction. */
export abstract class Networks {
  /** Locks the organization's row: creates are judged one at a time per organization (ranges must not overlap). */
  abstract lockOrganization(orgId: string): Promise<void>;
  /** The organization's networks in the region (the overlap check). */
  abstract inRegion(orgId: string, regionId: string): Promise<Network[]>;
  /** 409 conflict when the name is taken among the organization's networks (details.existing_id; the unique index decides). */
  abstract insert(network: Omit<Network, 'serverIds'>): Promise<void>;
  abstract find(orgId: string, id: string): Promise<Network | undefined>;
  /** The network locked until the transaction ends: `share` against a delete (attaching), `update` to change or delete it. */
  abstract lock(orgId: string, id: string, mode: 'share' | 'update'): Promise<Network | undefined>;
  abstract list(orgId: string, query: { limit: number; after?: PageCursor; filter: NetworkFilter }): Promise<Page<Network>>;
  /** 409 conflict when the new name is taken. */
  abstract update(id: string, change: { name?: string; labels?: Labels }): Promise<void>;
  abstract delete(id: string): Promise<void>;
  /** How many servers hold an attachment (any status) to the network. */
  abstract attachedCount(networkId: string): Promise<number>;
  /** The servers holding an attachment (any status), by id. */
  abstract attachedServerIds(networkId: string): Promise<string[]>;
  abstract regionExists(regionId: string): Promise<boolean>;

  /** The server's attachments (any status), by network id. */
  abstract ofServer(serverId: string): Promise<Attachment[]>;
  /** The addresses held in the network (any status). */
  abstract takenAddresses(networkId: string): Promise<Set<string>>;
  /**
   * Holds `ip` in the network for the server (status attaching). 'taken' when another server
   * holds the address (the unique (network, ip) index decides between concurrent requests: the
   * transaction must then end).
   */
  abstract reserve(attachment: Omit<Attachment, 'status'>): Promise<'reserved' | 'taken'>;
  abstract setStatus(serverId: string, networkId: string, status: AttachmentStatus): Promise<void>;
  /** Replaces the address (the reconciliation: the provider's wins). */
  abstract setAddress(serverId: string, networkId: string, ip: string): Promise<void>;
  abstract remove(serverId: string, networkId: string): Promise<void>;
  /** Every attachment of live servers, ordered by server id then network id (cli verify, the reconciliation sweep). */
  abstract all(): Promise<(Attachment & { orgId: string; ipRange: string })[]>;
}
