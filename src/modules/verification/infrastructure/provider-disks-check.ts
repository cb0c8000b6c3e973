import { Db } from '../../../shared/database/transaction';
import { BlockStorage, ProviderDisk, ProviderUnavailable } from '../../storage-provider/application/block-storage.port';
import { Finding, InvariantCheck } from '../application/invariant-checks.port';

interface VolumeRow {
  id: string;
  org_id: string;
  status: string;
  server_id: string | null;
  size_gb: number;
  resize_reserved_gb: number;
  deleted: boolean;
  busy: boolean;
}

/**
 * lifecycle.md "The storage provider": the provider's disks are the live volumes. Every volume
 * not deleted (and past `creating`) has a disk, attached to the server the volume names (or to
 * none); no disk is left for a deleted volume (a failed purchase whose compensation could not
 * reach the provider shows here) or for no volume at all; a disk has the volume's size (a resize
 * recorded once, at the provider and on the volume). Volumes with an unfinished operation
 * are in flight between the two and are not compared. The disks come from the BlockStorage port
 * (a real provider's adapter is checked the same way).
 */
export class ProviderDisksCheck implements InvariantCheck {
  readonly name = 'provider.disks_match_volumes';
  readonly description =
    'Every live volume (not creating, no operation in flight) has a disk at the storage provider attached to the same server, of its size; no provider disk belongs to a deleted or unknown volume';

  constructor(
    private readonly db: Db,
    private readonly storage: BlockStorage,
  ) {}

  async findViolations(): Promise<Finding[]> {
    let disks: ProviderDisk[];
    try {
      disks = await this.storage.listDisks();
    } catch (err) {
      if (!(err instanceof ProviderUnavailable)) throw err;
      return [{ subject: 'provider', message: `the storage provider could not list its disks: ${err.message}`, details: {} }];
    }
    const byVolume = new Map(disks.map((d) => [d.volumeId, d]));
    const volumes = await this.db.query<VolumeRow>(
      `SELECT v.id, v.org_id, v.status, v.server_id, v.size_gb, v.resize_reserved_gb, v.deleted_at IS NOT NULL AS deleted,
              EXISTS (SELECT 1 FROM operations o WHERE o.volume_id = v.id AND o.status IN ('pending', 'running')) AS busy
         FROM volumes v
        WHERE v.deleted_at IS NULL OR v.id = ANY($1::text[])
        ORDER BY v.id`,
      [disks.map((d) => d.volumeId)],
    );
    const found: Finding[] = [];
    const known = new Set<string>();
    for (const v of volumes) {
      known.add(v.id);
      if (v.busy) continue;
      const disk = byVolume.get(v.id);
      const details = { org_id: v.org_id, status: v.status, server_id: v.server_id, disk_id: disk?.diskId ?? null, disk_server_id: disk?.serverId ?? null };
      if (v.deleted) {
        if (disk) found.push({ subject: v.id, message: `volume is deleted but its disk ${disk.diskId} still exists at the provider`, details });
      } else if (v.status !== 'creating') {
        if (!disk) found.push({ subject: v.id, message: `${v.status} volume has no disk at the provider`, details });
        else if (disk.serverId !== v.server_id) {
          found.push({ subject: v.id, message: `volume names server ${v.server_id ?? 'none'} but its disk is attached to ${disk.serverId ?? 'none'}`, details });
        } else if (disk.sizeGb !== v.size_gb && v.resize_reserved_gb === 0) {
          // (A resize's reservation left behind is reported by resizes.reservations_in_flight.)
          found.push({ subject: v.id, message: `volume is ${v.size_gb} GB but its disk is ${disk.sizeGb} GB at the provider`, details: { ...details, size_gb: v.size_gb, disk_size_gb: disk.sizeGb } });
        }
      }
    }
    for (const d of disks) {
      if (!known.has(d.volumeId)) {
        found.push({ subject: d.volumeId, message: `the provider holds disk ${d.diskId} of a volume that does not exist`, details: { disk_id: d.diskId, disk_server_id: d.serverId } });
      }
    }
    return found;
  }
}
