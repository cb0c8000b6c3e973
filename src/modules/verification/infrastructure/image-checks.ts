import { Db } from '../../../shared/database/transaction';
import { ComputeProvider, ComputeUnavailable, ProviderImage } from '../../servers/application/compute-provider.port';
import { Finding, InvariantCheck } from '../application/invariant-checks.port';

/**
 * Every server image bought and kept (not a failed purchase) was charged exactly once: its
 * image.create operation succeeded with one hold and one capture (the ledger's own checks catch a
 * second capture); an image still `creating` has its operation unfinished.
 */
export class ImagesChargedOnceCheck implements InvariantCheck {
  readonly name = 'images.charged_once';
  readonly description = 'Every server image past creating (not a failed purchase) has exactly one image.create operation, succeeded, with one hold and one capture';

  constructor(private readonly db: Db) {}

  async findViolations(): Promise<Finding[]> {
    const rows = await this.db.query<{ id: string; org_id: string; status: string; creates: number; succeeded: number; captures: number; holds: number }>(
      `SELECT i.id, i.org_id, i.status,
              count(DISTINCT o.id)::int AS creates,
              count(DISTINCT o.id) FILTER (WHERE o.status = 'succeeded')::int AS succeeded,
              count(l.id) FILTER (WHERE l.kind = 'capture')::int AS captures,
              count(l.id) FILTER (WHERE l.kind = 'hold')::int AS holds
         FROM server_images i
         LEFT JOIN operations o ON o.type = 'image.create' AND o.params->>'image_id' = i.id
         LEFT JOIN wallet_ledger l ON l.operation_id = o.id
        WHERE i.status <> 'creating' AND i.deleted_reason IS DISTINCT FROM 'purchase_failed'
        GROUP BY i.id, i.org_id, i.status
       HAVING NOT (count(DISTINCT o.id) = 1 AND count(DISTINCT o.id) FILTER (WHERE o.status = 'succeeded') = 1
                   AND count(l.id) FILTER (WHERE l.kind = 'capture') = 1 AND count(l.id) FILTER (WHERE l.kind = 'hold') = 1)
        ORDER BY i.id`,
    );
    return rows.map((r) => ({
      subject: r.id,
      message: `${r.status} image has ${r.creates} image.create operation(s) (${r.succeeded} succeeded), ${r.holds} hold(s) and ${r.captures} capture(s); expected 1, 1, 1, 1`,
      details: { ...r },
    }));
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
export class ProviderImagesCheck implements InvariantCheck {
  readonly name = 'provider.images_match';
  readonly description = 'Every live server image (no operation in flight) exists at the compute provider; no provider image belongs to a deleted or unknown image';

  constructor(
    private readonly db: Db,
    private readonly compute: ComputeProvider,
  ) {}

  async findViolations(): Promise<Finding[]> {
    let held: ProviderImage[];
    try {
      held = await this.compute.listServerImages();
    } catch (err) {
      if (!(err instanceof ComputeUnavailable)) throw err;
      return [{ subject: 'provider', message: `the compute provider could not list its images: ${err.message}`, details: {} }];
    }
    const atProvider = new Set(held.map((i) => i.imageId));
    const rows = await this.db.query<{ id: string; org_id: string; status: string; busy: boolean }>(
      `SELECT id, org_id, status, operation_id IS NOT NULL AS busy FROM server_images WHERE status IN ('available', 'suspended') OR id = ANY($1::text[]) ORDER BY id`,
      [[...atProvider]],
    );
    const found: Finding[] = [];
    const known = new Set<string>();
    for (const r of rows) {
      known.add(r.id);
      if (r.busy || r.status === 'creating' || r.status === 'deleting') continue;
      const live = r.status === 'available' || r.status === 'suspended';
      if (live && !atProvider.has(r.id)) found.push({ subject: r.id, message: `${r.status} image is missing at the compute provider`, details: { org_id: r.org_id } });
      if (!live && atProvider.has(r.id)) found.push({ subject: r.id, message: `${r.status} image still exists at the compute provider`, details: { org_id: r.org_id } });
    }
    for (const id of atProvider) {
      if (!known.has(id)) found.push({ subject: id, message: 'the compute provider holds an image of no known server image', details: {} });
    }
    return found;
  }
}
