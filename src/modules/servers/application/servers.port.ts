import { AutoRenewSetting } from '../../prepaid/domain/auto-renew';
import { Page, PageCursor } from '../../../shared/kernel/pagination/cursor';
import { Server, ServerFilter } from '../domain/server';

/** The organization's servers, as GET /v1/servers reads them. */
export abstract class ServerReads {
  /** One server of the organization, deleted ones included; undefined otherwise. */
  abstract findInOrg(orgId: string, id: string): Promise<Server | undefined>;
  /** The servers named (each in its organization), in one read; those not found are left out. */
  abstract findManyInOrgs(refs: readonly { orgId: string; id: string }[]): Promise<Server[]>;
  /** Newest first (created_at, id), after the cursor, matching every filter given. */
  abstract listInOrg(orgId: string, query: { limit: number; after?: PageCursor; filter: ServerFilter }): Promise<Page<Server>>;
}

/** What PATCH /v1/servers/{id} may change. */
export interface ServerChanges {
  name?: string;
  labels?: Record<string, string>;
  deleteProtection?: boolean;
  /** Automatic renewal turned on or off, its term; `leadS`: AUTO_RENEW_LEAD_S, which schedules its attempts. */
  autoRenew?: AutoRenewSetting;
}

/** Writes of the servers module (synchronous edits). */
export abstract class ServerWrites {
  /** The server, locked (FOR UPDATE) until the transaction ends, deleted ones included; undefined when not the organization's. */
  abstract lockInOrg(orgId: string, id: string): Promise<Server | undefined>;
  /** The live server of the organization with that name, if any. */
  abstract liveIdByName(orgId: string, name: string): Promise<string | undefined>;
  /** Writes the changes; a name taken among the organization's live servers: 409 conflict with details.existing_id. */
  abstract update(orgId: string, id: string, changes: ServerChanges): Promise<void>;
}
