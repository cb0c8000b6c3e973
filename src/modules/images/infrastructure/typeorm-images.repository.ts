import { Injectable } from '@nestjs/common';
import { CHECK_VIOLATION, Db, constraintOf, sqlState } from '../../../shared/database/transaction';
import { Page, PageCursor, toPage } from '../../../shared/kernel/pagination/cursor';
import { CopyRows, CopyTermRow, copyTermOf, copyTermValues } from '../../prepaid/infrastructure/copy-rows';
import { DeletedReason } from '../../prepaid/domain/term';
import { ImageRepository, ListedImage, NewImage } from '../application/images.port';
import { CatalogImage, IMAGES_PER_ORGANIZATION, ImageListType, ImageStatus, ServerImage, imageQuota } from '../domain/image';

interface ImageRow extends CopyTermRow {
  id: string;
  org_id: string;
  name: string;
  status: ImageStatus;
  from_server_id: string;
  region_id: string;
  disk_gb: number;
  os: string | null;
  deleted_at: Date | null;
  deleted_reason: DeletedReason | null;
}

const COLUMNS = `i.id, i.org_id, i.name, i.status, i.from_server_id, i.region_id, i.disk_gb, i.os, i.term_months,
         i.billing_currency, i.billing_amount::text, i.price_usd_minor::text, i.price_idr_minor::text, i.expires_at,
         i.auto_renew_enabled, i.auto_renew_term_months, i.labels, i.operation_id, i.created_at, i.deleted_at,
         i.suspended_at, i.release_at, i.deleted_reason`;

const SELECT = `SELECT ${COLUMNS} FROM server_images i`;

const toImage = (r: ImageRow): ServerImage => ({
  id: r.id,
  orgId: r.org_id,
  name: r.name,
  status: r.status,
  fromServerId: r.from_server_id,
  regionId: r.region_id,
  diskGb: r.disk_gb,
  os: r.os,
  ...copyTermOf(r),
  deletedAt: r.deleted_at,
  suspendedAt: r.suspended_at,
  releaseAt: r.release_at,
  deletedReason: r.deleted_reason,
});

/**
 * The organization images' SQL. The live count per organization is kept by the
 * server_images_count_live trigger in the inserting transaction; its CHECK (100) refuses the
 * insert past the limit, and the counter row's lock serialises racing inserts (migration ServerImages1764000000460).
 */
@Injectable()
export class TypeOrmImageRepository extends CopyRows<ImageRow, ServerImage> implements ImageRepository {
  /** Its reads by id and its update, operation, status transitions, renewal, region price and claims (CopyRows) are shared with the other prepaid copies. */
  constructor(db: Db) {
    super(db, { table: 'server_images', alias: 'i', select: SELECT, statements: 'server_images', idParam: 'image_id' }, toImage);
  }

  async create(i: NewImage): Promise<ServerImage> {
    try {
      await this.db.query(
        `INSERT INTO server_images (id, org_id, name, status, from_server_id, region_id, disk_gb, os, term_months, billing_currency,
                                    billing_amount, price_usd_minor, price_idr_minor, expires_at, auto_renew_enabled, auto_renew_term_months,
                                    labels, operation_id, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)`,
        [
          i.id, i.orgId, i.name, i.status, i.fromServerId, i.regionId, i.diskGb, i.os, ...copyTermValues(i),
        ],
        'server_images_create',
      );
    } catch (err) {
      if (sqlState(err) === CHECK_VIOLATION && constraintOf(err) === 'org_images_within_limit') throw imageQuota(IMAGES_PER_ORGANIZATION);
      throw err;
    }
    return (await this.findInOrg(i.orgId, i.id))!;
  }

  async findCatalog(id: string): Promise<CatalogImage | undefined> {
    const row = await this.db.one<{ id: string; name: string; type: 'system' | 'app'; created_at: Date }>(
      'SELECT id, name, type, created_at FROM images WHERE id = $1',
      [id],
      'catalog_images_find',
    );
    return row && { id: row.id, name: row.name, type: row.type, createdAt: row.created_at };
  }

  /**
   * One ordering for both kinds (created_at DESC, id DESC): the catalog's rows carry their
   * columns and NULLs for the rest, the organization's live ones every column.
   */
  async list(orgId: string, query: { limit: number; after?: PageCursor; type?: ImageListType }): Promise<Page<ListedImage>> {
    const params: unknown[] = [orgId, query.limit + 1];
    const param = (value: unknown): string => `$${params.push(value)}`;
    const parts: string[] = [];
    const catalogType = query.type === undefined ? undefined : query.type === 'snapshot' ? null : query.type;
    if (catalogType !== null) {
      // $1 (the organization) is named in every statement, so its type is always known.
      const where = catalogType === undefined ? '$1::text IS NOT NULL' : `$1::text IS NOT NULL AND c.type = ${param(catalogType)}`;
      parts.push(
        `SELECT 'catalog' AS kind, c.id, NULL::text AS org_id, c.name, NULL::text AS status, NULL::text AS from_server_id, NULL::text AS region_id,
                NULL::int AS disk_gb, NULL::text AS os, NULL::int AS term_months, NULL::text AS billing_currency, NULL::text AS billing_amount,
                NULL::text AS price_usd_minor, NULL::text AS price_idr_minor, NULL::timestamptz AS expires_at, NULL::boolean AS auto_renew_enabled,
                NULL::int AS auto_renew_term_months, NULL::jsonb AS labels, NULL::text AS operation_id, c.created_at, NULL::timestamptz AS deleted_at,
                NULL::timestamptz AS suspended_at, NULL::timestamptz AS release_at, NULL::text AS deleted_reason, c.type AS catalog_type
           FROM images c WHERE ${where}`,
      );
    }
    if (query.type === undefined || query.type === 'snapshot') {
      parts.push(`SELECT 'own' AS kind, ${COLUMNS}, NULL::text AS catalog_type FROM server_images i WHERE i.org_id = $1 AND i.status <> 'deleted'`);
    }
    const after = query.after ? `WHERE (u.created_at, u.id) < (${param(query.after.createdAt)}::timestamptz, ${param(query.after.id)})` : '';
    const sql = `SELECT u.*, to_char(u.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at_text
         FROM (${parts.join(' UNION ALL ')}) u ${after}
        ORDER BY u.created_at DESC, u.id DESC LIMIT $2`;
    type Row = ImageRow & { kind: 'catalog' | 'own'; catalog_type: 'system' | 'app' | null; created_at_text: string };
    const rows = await this.db.query<Row>(sql, params, this.db.statementName('server_images_list', sql));
    return toPage(rows, query.limit, (r) => ({ createdAt: r.created_at_text, id: r.id }), (r): ListedImage =>
      r.kind === 'catalog'
        ? { kind: 'catalog', image: { id: r.id, name: r.name, type: r.catalog_type!, createdAt: r.created_at } }
        : { kind: 'own', image: toImage(r) },
    );
  }
}
