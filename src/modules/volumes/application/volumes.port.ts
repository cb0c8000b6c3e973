import { AutoRenewSetting } from '../../prepaid/domain/auto-renew';
import { Page, PageCursor } from '../../../shared/kernel/pagination/cursor';
import { RenewedTerms } from '../../prepaid/domain/term';
import { Server } from '../domain/server';
import { Volume, VolumeFilter } from '../domain/volume';
import { Labels } from '../../prepaid/domain/labels';

/** Members PATCH may change; undefined: left as it is. */
export interface VolumeChanges {
  name?: string;
  note?: string | null;
  labels?: Labels;
  deleteProtection?: boolean;
  /** Automatic renewal turned on or off, its term; `leadS`: AUTO_RENEW_LEAD_S, which schedules its attempts. */
  autoRenew?: AutoRenewSetting;
}

export type NewVolume = Omit<Volume, 'server' | 'createdAt' | 'deletedAt' | 'autoRenew'> & { serverId: string | null; createdAt?: Date; autoRenew?: AutoRenewSetting };

/** Volumes of organizations. Lookups are always scoped to one organization. */
export abstract class VolumeRepository {
  /**
   * Creates the volume; conflict when the id exists or the name is taken among the organization's
   * volumes not deleted; out_of_stock when a live volume does not fit its region's free capacity
   * (the region's used_gb counter, spread over its slot rows, grows with it in the same transaction).
   */
  abstract create(volume: NewVolume): Promise<Volume>;
  /**
   * What a purchase checks before it writes anything (one read, no lock): whether the name is
   * taken among the organization's volumes not deleted, the region's free capacity in GB
   * (null: no such region) and, when the adapter reads them in the same statement, the region's
   * zones by id (as Catalog.zonesOf). create() decides again, under the unique index and the region
   * counter's CHECK, for purchases that race.
   */
  abstract purchaseRoom(orgId: string, name: string, regionId: string): Promise<{ nameTaken: boolean; freeGb: number | null; zones?: { id: string; available: boolean }[] }>;
  /**
   * Creates the volumes in one statement (the seed loader's bulk path: the region counters move
   * once per statement). All or none; the same errors as create, without naming the volume.
   */
  abstract createMany(volumes: NewVolume[]): Promise<void>;
  abstract findInOrg(orgId: string, id: string): Promise<Volume | undefined>;
  /** Like findInOrg, and locks the volume's row (in the active transaction) until it ends. */
  abstract lockInOrg(orgId: string, id: string): Promise<Volume | undefined>;
  /** The organization's volumes passing the filter (no filter: those not deleted), newest first. */
  abstract listInOrg(orgId: string, query: { limit: number; after?: PageCursor; filter?: VolumeFilter }): Promise<Page<Volume>>;
  /** Writes the members given; 409 conflict (field name) when the new name is taken, by the database's unique index. */
  abstract update(id: string, changes: VolumeChanges): Promise<void>;
  /**
   * lockInOrg() of several volumes at once: the rows of `refs` that exist (each in its own
   * organization), locked in id order (in the active transaction) until it ends. Missing ones are left out.
   */
  abstract lockManyInOrgs(refs: readonly { orgId: string; id: string }[]): Promise<Volume[]>;
  /** A delete was accepted: the volume is `deleting` at once (it keeps its server until the worker detaches it). */
  abstract markDeleting(id: string): Promise<void>;
  /** Writes a successful renewal: expiry, term and billing. */
  abstract saveRenewal(id: string, terms: RenewedTerms): Promise<void>;
  /** saveRenewal() of several volumes, in one statement. */
  abstract saveRenewals(renewals: readonly { id: string; terms: RenewedTerms }[]): Promise<void>;
}

/** Servers (VMs) of organizations, as far as disks need them. */
export abstract class ServerRepository {
  abstract create(server: { id: string; orgId: string; name: string; regionId: string; zoneId: string }): Promise<Server>;
  abstract findInOrg(orgId: string, id: string): Promise<Server | undefined>;
  /** Like findInOrg (not deleted servers only), and locks the server's row until the transaction ends: the per-server slot count is taken under it. */
  abstract lockInOrg(orgId: string, id: string): Promise<Server | undefined>;
  /**
   * The data disks the server holds or is about to hold: volumes not deleted on it, plus
   * unfinished volume.create and volume.attach operations with it (whose volume is not on it yet).
   * Call it under lockInOrg so two requests cannot both take the last slot.
   */
  abstract slotsTaken(serverId: string): Promise<number>;
  /**
   * Whether the server is being deleted (`deleting`), and the unfinished vm.delete operation doing
   * it; undefined otherwise. Takes the server's row FOR SHARE until the transaction ends, so a
   * detach or delete of its disk and DELETE /v1/servers/{id} (which locks it FOR UPDATE) are
   * accepted one after the other.
   */
  abstract deletion(serverId: string): Promise<{ operationId: string | null } | undefined>;
}
