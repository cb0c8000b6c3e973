import { Injectable } from '@nestjs/common';
import { OrphanSweep } from '../../operations/application/orphan-sweep';
import { ComputeGateway } from '../../servers/application/compute-gateway';
import { ProviderImage } from '../../servers/application/compute-provider.port';
import { ImageRepository } from './images.port';

/**
 * A failed image.create deletes the copy the provider made (its compensation), and a deletion
 * deletes it as its step; when the provider cannot be reached then, or the process dies first, or
 * the row went while the copy stayed, the copy is left. This sweep, run every
 * ORPHAN_INSTANCE_SWEEP_INTERVAL_MS by the worker processes beside the orphan instance sweep
 * (CleanUpOrphanImagesJob), deletes at the compute provider every server image whose row is
 * deleted (or unknown) and that no unfinished operation names; `cli verify`
 * (provider.images_match) reports such a copy until it has run.
 *
 * The loop is OrphanSweep's (a page of ComputeProvider.listServerImages at a time, no database
 * connection held while it calls the provider, stops between two copies once told). Each delete's
 * step is `orphan-cleanup`. Returns how many copies it deleted.
 */
@Injectable()
export class CleanUpOrphanImages extends OrphanSweep<ProviderImage> {
  constructor(compute: ComputeGateway, images: ImageRepository) {
    super('CleanUpOrphanImages', {
      deleted: 'deleted the copy of a deleted server image at the provider',
      failed: 'could not delete an orphan server image; the next sweep tries again',
      list: (page) => compute.listServerImages(page),
      key: (copy) => copy.imageId,
      goneAmong: (imageIds) => images.goneAmong(imageIds),
      remove: (copy) => compute.deleteImage({ imageId: copy.imageId, step: 'orphan-cleanup' }),
      fields: (copy) => ({ image_id: copy.imageId, provider_id: copy.providerId }),
    });
  }
}
