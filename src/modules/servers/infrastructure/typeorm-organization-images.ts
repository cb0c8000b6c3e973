import { Injectable } from '@nestjs/common';
import { Db } from '../../../shared/database/transaction';
import { OrganizationImages, UsableImage } from '../application/organization-images.port';

/** Reads server_images (the images module's table) for purchases and rebuilds, FOR SHARE. */
@Injectable()
export class TypeOrmOrganizationImages extends OrganizationImages {
  constructor(private readonly db: Db) {
    super();
  }

  async lockForUse(orgId: string, id: string): Promise<UsableImage | undefined> {
    const row = await this.db.one<{ id: string; region_id: string; disk_gb: number; status: UsableImage['status'] }>(
      'SELECT id, region_id, disk_gb, status FROM server_images WHERE org_id = $1 AND id = $2 FOR SHARE',
      [orgId, id],
      'server_images_lock_for_use',
    );
    return row && { id: row.id, regionId: row.region_id, diskGb: row.disk_gb, status: row.status };
  }
}
