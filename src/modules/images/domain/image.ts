import { DomainError, invalidRequest, invalidState } from '../../../shared/kernel/errors/domain-error';
import { Currency, Money, PricePair } from '../../../shared/kernel/money/money';
import { DeletedReason, PrepaidTerm, RenewalQuote, TermMonths, presentTerm, termAmount } from '../../prepaid/domain/term';

/**
 * A server image of an organization (type `snapshot`): a copy of a server's boot disk, bought for
 * a prepaid term at the region's snapshot price (`disk_gb × snapshot_price_per_gb_month[currency]
 * × term_months`), usable by POST /v1/servers and rebuild in its region. It outlives its server.
 * It takes no capacity of its region.
 */
export const IMAGE_STATUSES = ['creating', 'available', 'suspended', 'deleting', 'deleted'] as const;
export type ImageStatus = (typeof IMAGE_STATUSES)[number];

/** What GET /v1/images lists: the catalog's images (system, app) and the organization's own (snapshot). */
export const IMAGE_LIST_TYPES = ['system', 'app', 'snapshot'] as const;
export type ImageListType = (typeof IMAGE_LIST_TYPES)[number];

/** Live images (not deleted) an organization may have. */
export const IMAGES_PER_ORGANIZATION = 100;

export interface ServerImage extends PrepaidTerm {
  id: string;
  orgId: string;
  name: string;
  status: ImageStatus;
  fromServerId: string;
  regionId: string;
  /** The server's boot disk when it was taken: a server made from it needs a plan with at least this. */
  diskGb: number;
  /** The image the server was installed from (a catalog image, or another image of the organization); null when unknown. */
  os: string | null;
  deletedAt: Date | null;
  deletedReason: DeletedReason | null;
}

/** A catalog image, as GET /v1/images lists it beside the organization's. */
export interface CatalogImage {
  id: string;
  name: string;
  type: 'system' | 'app';
  createdAt: Date;
}

export function presentImage(i: ServerImage) {
  return {
    id: i.id,
    name: i.name,
    type: 'snapshot' as const,
    status: i.status,
    from_server_id: i.fromServerId,
    region: i.regionId,
    disk_gb: i.diskGb,
    os: i.os,
    ...presentTerm(i, 'price_per_gb_month'),
    deleted_at: i.deletedAt ? i.deletedAt.toISOString() : null,
    deleted_reason: i.deletedReason,
  };
}

export function presentCatalogImage(i: CatalogImage) {
  return { id: i.id, name: i.name, type: i.type };
}

/** The price of an image of `diskGb` for `termMonths`, exact. */
export function imageAmount(price: PricePair, currency: Currency, termMonths: number, diskGb: number): Money {
  return termAmount(price, currency, termMonths, diskGb);
}

/** 409 invalid_state naming the image's unfinished operation. */
export function imageBusy(i: ServerImage): DomainError {
  return new DomainError('invalid_state', `Image ${i.id} has an unfinished operation ${i.operationId}; wait for it to end`, { operation_id: i.operationId });
}

/** A renewal's charge at the frozen price (409 invalid_state when creating, deleting, deleted or busy). */
export function quoteImageRenewal(i: ServerImage, termMonths: TermMonths, currency?: Currency): RenewalQuote {
  if (i.status === 'deleted' || i.status === 'deleting') throw invalidState(`Image ${i.id} is ${i.status} and cannot be renewed`);
  if (i.status === 'creating') throw invalidState(`Image ${i.id} is still being created; renew it once it is available`);
  if (i.operationId) throw imageBusy(i);
  return { termMonths, amount: imageAmount(i.price, currency ?? i.billing.currency, termMonths, i.diskGb) };
}

/** 409 quota_exceeded: the organization's live images are at their limit. */
export function imageQuota(limit: number): DomainError {
  return new DomainError('quota_exceeded', `The organization has ${limit} images already (the limit); delete one first`, { limit });
}

export const IMAGE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
export const IMAGE_NAME_RULE = '1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit';

/** An image's name, or 400 naming `field`. Names need not be unique. */
export function checkImageName(value: unknown, field = 'name'): string {
  if (typeof value !== 'string' || !IMAGE_NAME_PATTERN.test(value)) throw invalidRequest(`${field} must be ${IMAGE_NAME_RULE}`, { field });
  return value;
}

/** Whether an id names an organization's image (rather than a catalog one). */
export const isOrganizationImageId = (id: string): boolean => id.startsWith('img_');
