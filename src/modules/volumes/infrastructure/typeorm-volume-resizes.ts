import { Injectable } from '@nestjs/common';
import { CHECK_VIOLATION, Db, constraintOf, sqlState } from '../../../shared/database/transaction';
import { VolumeResizes } from '../application/volume-resizes.port';
import { noCapacityForResize } from '../domain/volume-resize';

/** VolumeResizes on the volumes row: the region counter's trigger moves used_gb (in the volume's slot) with resize_reserved_gb and size_gb. */
@Injectable()
export class TypeOrmVolumeResizes extends VolumeResizes {
  constructor(private readonly db: Db) {
    super();
  }

  async reserve(volumeId: string, regionId: string, addedGb: number): Promise<void> {
    try {
      await this.db.query('UPDATE volumes SET resize_reserved_gb = $2 WHERE id = $1 AND deleted_at IS NULL', [volumeId, addedGb]);
    } catch (err) {
      if (sqlState(err) === CHECK_VIOLATION && constraintOf(err) === 'regions_used_within_capacity') throw noCapacityForResize(regionId, addedGb);
      throw err;
    }
  }

  async complete(volumeId: string, sizeGb: number): Promise<void> {
    await this.db.query('UPDATE volumes SET size_gb = $2, resize_reserved_gb = 0 WHERE id = $1', [volumeId, sizeGb]);
  }

  async release(volumeId: string): Promise<void> {
    await this.db.query('UPDATE volumes SET resize_reserved_gb = 0 WHERE id = $1 AND resize_reserved_gb <> 0', [volumeId]);
  }
}
