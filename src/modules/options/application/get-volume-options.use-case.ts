import { Injectable } from '@nestjs/common';
import { Clock } from '../../../shared/kernel/clock/clock';
import { notFound } from '../../../shared/kernel/errors/domain-error';
import { unknownRegion } from '../domain/unknown-place';
import { VolumeType } from '../domain/catalog';
import { OfferSnapshot, VolumeOptions, volumeOptions } from '../domain/volume-options';
import { CatalogQueries } from './catalog-queries.port';

/** How long the static part of the catalog (offer, zones) is served from memory. */
export const CATALOG_CACHE_TTL_MS = 5_000;

interface CacheEntry {
  expiresAt: number;
  snapshot: Promise<OfferSnapshot | undefined>;
}

/**
 * GET /v1/volume-options: what a caller can buy in one region, and where it can attach it.
 *
 * Two SQL round trips at most: the offer and zones (cached in memory for CATALOG_CACHE_TTL_MS,
 * so an operator change shows within that time), then the live part (free capacity and the
 * organization's servers with a free disk slot), read at every request and never cached.
 */
@Injectable()
export class GetVolumeOptions {
  private readonly cache = new Map<string, CacheEntry>();

  constructor(
    private readonly queries: CatalogQueries,
    private readonly clock: Clock,
  ) {}

  async execute(orgId: string, input: { region: string; type: VolumeType }): Promise<VolumeOptions> {
    const snapshot = await this.snapshot(input.region, input.type);
    if (!snapshot) throw unknownRegion(input.region, (await this.queries.regions()).map((r) => r.id));
    if (!snapshot.offer) throw notFound(`Region ${input.region} sells no ${input.type} disks`);
    const load = await this.queries.regionLoad(snapshot.regionId, orgId, snapshot.offer.perServerLimit);
    return volumeOptions(snapshot.offer, snapshot.zones, load);
  }

  /**
   * The cached static part. Only regions that exist are kept (so the cache holds at most two
   * entries per region); concurrent misses share one query.
   */
  private snapshot(regionId: string, type: VolumeType): Promise<OfferSnapshot | undefined> {
    const key = `${type}:${regionId}`;
    const now = this.clock.now().getTime();
    const cached = this.cache.get(key);
    if (cached && cached.expiresAt > now) return cached.snapshot;

    const entry: CacheEntry = { expiresAt: now + CATALOG_CACHE_TTL_MS, snapshot: this.queries.offerSnapshot(regionId, type) };
    this.cache.set(key, entry);
    const forget = (): void => {
      if (this.cache.get(key) === entry) this.cache.delete(key);
    };
    entry.snapshot.then((found) => found === undefined && forget(), forget);
    return entry.snapshot;
  }
}
