import { Db } from '../../../shared/database/transaction';
import { ComputeProvider, ComputeUnavailable } from '../../servers/application/compute-provider.port';
import { Finding, InvariantCheck } from '../application/invariant-checks.port';
import { CopiesChargedOnceCheck, ProviderCopiesCheck } from './copy-checks';

/**
 * Every server image bought and kept (not a failed purchase) was charged exactly once: its
 * image.create operation succeeded with one hold and one capture (the ledger's own checks catch a
 * second capture); an image still `creating` has its operation unfinished.
 */
export class ImagesChargedOnceCheck extends CopiesChargedOnceCheck {
  constructor(db: Db) {
    super(db, {
      name: 'images.charged_once',
      description: 'Every server image past creating (not a failed purchase) has exactly one image.create operation, succeeded, with one hold and one capture',
      table: 'server_images',
      noun: 'image',
      createType: 'image.create',
      idParam: 'image_id',
    });
  }
}

/** The live image counters match the images (and so the limit of 100 per organization holds). */
export class ImageCountsCheck implements InvariantCheck {
  readonly name = 'images.counts_match';
  readonly description = 'The live server images of each organization (at most 100) are what its counter says';

  constructor(private readonly db: Db) {}

  async findViolations(): Promise<Finding[]> {
    const rows = await this.db.query<{ scope: string; counted: number; live: number }>(
      `SELECT coalesce(c.org_id, x.org_id) AS scope, coalesce(c.live, 0) AS counted, coalesce(x.n, 0)::int AS live
         FROM org_image_counts c
         FULL JOIN (SELECT org_id, count(*) AS n FROM server_images WHERE status <> 'deleted' GROUP BY org_id) x ON x.org_id = c.org_id
        WHERE coalesce(c.live, 0) <> coalesce(x.n, 0) OR coalesce(x.n, 0) > 100
        ORDER BY 1`,
    );
    return rows.map((r) => ({ subject: r.scope, message: `${r.live} live image(s), counter ${r.counted}`, details: r }));
  }
}

/**
 * Every live server image (available or suspended, no operation in flight) exists at the compute
 * provider, and no provider image is left for a deleted image or for none.
 */
export class ProviderImagesCheck extends ProviderCopiesCheck {
  constructor(db: Db, compute: ComputeProvider) {
    super(db, {
      name: 'provider.images_match',
      description: 'Every live server image (no operation in flight) exists at the compute provider; no provider image belongs to a deleted or unknown image',
      table: 'server_images',
      noun: 'image',
      provider: 'compute provider',
      cannotList: 'could not list its images',
      holdsUnknown: 'holds an image of no known server image',
      list: async () => (await compute.listServerImages()).map((i) => i.imageId),
      unavailable: (err): err is ComputeUnavailable => err instanceof ComputeUnavailable,
    });
  }
}
