import { Server } from '../domain/server';
import { Volume } from '../domain/volume';

export type NewVolume = Omit<Volume, 'server' | 'createdAt' | 'deletedAt'> & { serverId: string | null };

/** Volumes of organizations. Lookups are always scoped to one organization. */
export abstract class VolumeRepository {
  /** Creates the volume; conflict when the id exists. */
  abstract create(volume: NewVolume): Promise<Volume>;
  abstract findInOrg(orgId: string, id: string): Promise<Volume | undefined>;
}

/** Servers (VMs) of organizations, as far as disks need them. */
export abstract class ServerRepository {
  abstract create(server: { id: string; orgId: string; name: string; regionId: string; zoneId: string }): Promise<Server>;
  abstract findInOrg(orgId: string, id: string): Promise<Server | undefined>;
}
