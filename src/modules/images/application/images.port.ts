import { PricePair } from '../../../shared/kernel/money/money';
import { Page, PageCursor } from '../../../shared/kernel/pagination/cursor';
import { Labels } from '../../prepaid/domain/labels';
import { DeletedReason, RenewedTerms, TermMonths } from '../../prepaid/domain/term';
import { CatalogImage, ImageListType, ServerImage } from '../domain/image';

export type NewImage = Omit<ServerImage, 'deletedAt' | 'suspendedAt' | 'releaseAt' | 'deletedReason'>;

export interface ImageChanges {
  name?: string;
  labels?: Labels;
  autoRenew?: { enabled: boolean; termMonths: TermMonths | null };
}

/** An image whose deadline has come, claimed (row locked FOR UPDATE SKIP LOCKED) by a term sweep. */
export interface DueImage {
  id: string;
  orgId: string;
  expiresAt: Date;
  termMonths: TermMonths;
  autoRenew: { enabled: boolean; termMonths: TermMonths | null };
}

/** One entry of GET /v1/images: a catalog image or one of the organization's. */
export type ListedImage = { kind: 'catalog'; image: CatalogImage } | { kind: 'own'; image: ServerImage };

/** The organization images' rows. Every write runs in the caller's transaction. */
export abstract class ImageRepository {
  /** Inserts an image (its organization's live count goes up with it, in the database): quota_exceeded (details.limit) at the limit. */
  abstract create(i: NewImage): Promise<ServerImage>;
  abstract findInOrg(orgId: string, id: string): Promise<ServerImage | undefined>;
  /** The catalog's image (system or app, the same for every organization), as GET /v1/images lists it. */
  abstract findCatalog(id: string): Promise<CatalogImage | undefined>;
  abstract lockInOrg(orgId: string, id: string): Promise<ServerImage | undefined>;
  /** Locks the image's row by id alone (the worker). */
  abstract lock(id: string): Promise<ServerImage | undefined>;
  /** The catalog's images and the organization's live ones, newest first (created_at, id), one `type` when given. */
  abstract list(orgId: string, query: { limit: number; after?: PageCursor; type?: ImageListType }): Promise<Page<ListedImage>>;
  abstract update(id: string, changes: ImageChanges): Promise<void>;
  /** Names (or clears, null) the image's unfinished operation. */
  abstract setOperation(id: string, operationId: string | null): Promise<void>;
  /** creating → available, its term counted from now. */
  abstract markAvailable(id: string, expiresAt: Date): Promise<void>;
  abstract markDeleting(id: string, operationId: string, reason: DeletedReason): Promise<void>;
  abstract markDeleted(id: string, at: Date, reason: DeletedReason): Promise<void>;
  abstract markSuspended(id: string, at: Date, releaseAt: Date): Promise<void>;
  /** A renewal: the new term, billing and expiry; a suspended image becomes available again. */
  abstract saveRenewal(id: string, terms: RenewedTerms): Promise<void>;
  /** The region's snapshot price per GB-month (images are charged at it); null when it sells none; undefined when there is no such region. */
  abstract regionPrice(regionId: string): Promise<PricePair | null | undefined>;
  /** Available images with `expires_at <= now` and no unfinished operation (row-locked, SKIP LOCKED). */
  abstract claimExpired(now: Date, limit: number): Promise<DueImage[]>;
  /** Suspended images with `release_at <= now` and no unfinished operation (row-locked, SKIP LOCKED). */
  abstract claimReleasable(now: Date, limit: number): Promise<DueImage[]>;
  /** Of these ids (copies the provider holds), those with no live row (deleted, or none) and no unfinished operation naming them (the orphan sweep). */
  abstract goneAmong(ids: readonly string[]): Promise<string[]>;
}
