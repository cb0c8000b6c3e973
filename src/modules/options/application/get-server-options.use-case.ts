import { Injectable } from '@nestjs/common';
import { notFound } from '../../../shared/kernel/errors/domain-error';
import { unknownRegion } from '../domain/unknown-place';
import { ServerOptions, serverOptions } from '../domain/server-options';
import { ServableImages } from '../../servers/application/compute-provider.port';
import { CatalogQueries } from './catalog-queries.port';
import { ServerCatalogQueries } from './server-catalog-queries.port';

/**
 * GET /v1/server-options: read at every request, never cached (stock and the purchase switches
 * must be what the next purchase sees). An unknown region: 400 with details.valid; one selling no servers: 404. The
 * images are the catalog's that the compute provider can serve (host agents: those some agent has
 * built; the simulated provider: all).
 */
@Injectable()
export class GetServerOptions {
  constructor(
    private readonly queries: ServerCatalogQueries,
    private readonly images: ServableImages,
    private readonly regions: CatalogQueries,
  ) {}

  async execute(regionId: string): Promise<ServerOptions> {
    const snapshot = await this.queries.offerSnapshot(regionId);
    if (!snapshot) throw unknownRegion(regionId, (await this.regions.regions()).map((r) => r.id));
    const options = serverOptions(snapshot);
    if (!options) throw notFound(`Region ${regionId} sells no servers`);
    const servable = this.images.servableImages();
    return servable === null ? options : { ...options, images: options.images.filter((i) => servable.includes(i.id)) };
  }
}
