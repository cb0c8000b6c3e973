import { Server } from '../domain/server';

/** What the reconciliation sweep writes on one server (ReconcileServersWithProvider). */
export interface ServerStateChange {
  /** A settled status the instance shows. */
  status?: 'running' | 'stopped';
  /** Marks the server deleted (status `deleted`, ipv4 null, vCPUs back to the region: the servers triggers). */
  deletedAt?: Date;
  instanceMissingSince?: Date | null;
  /** vCPUs a failed plan change left reserved, given back (0). */
  resizeReservedVcpus?: 0;
}

/** The servers the reconciliation sweep reads and repairs. */
export abstract class ServerReconcileStates {
  /** A page of live servers (not deleted) with no unfinished vm.* or template.* operation, by id after `after`. */
  abstract settledAfter(after: string, limit: number): Promise<{ id: string; orgId: string }[]>;
  /** The server as it is now (no lock); undefined when unknown. */
  abstract find(orgId: string, id: string): Promise<Server | undefined>;
  /** The server, locked (FOR UPDATE) until the transaction ends; undefined when unknown. */
  abstract lock(orgId: string, id: string): Promise<Server | undefined>;
  /** Whether an unfinished vm.* or template.* operation names the server (vm_id). */
  abstract busy(serverId: string): Promise<boolean>;
  /**
   * Writes the change. Marking it deleted also deletes the server's own firewall rules, as a
   * delete does; returns their ids.
   */
  abstract apply(serverId: string, change: ServerStateChange): Promise<{ firewallRuleIds: string[] }>;
}
