import { Injectable } from '@nestjs/common';
import { notFound } from '../../../shared/kernel/errors/domain-error';
import { ServerOptions, serverOptions } from '../domain/server-options';
import { ServableImages } from '../../servers/application/compute-provider.port';
import { ServerCatalogQueries } from './server-catalog-queries.port';

/**
 * GET /v1/server-options: read at every request, never cached (stock and the purchase switches
 * must be what the next purchase sees). An unknown region, or one selling no servers: 404. The
 * images are the catalog's that the compute provider can serve (host agents: those some agent has
 * built; the simulated provider: all).
 */
@Injectable()
export class GetServerOptions {
  constructor(
    private readonly queries: ServerCatalogQueries,
    private readonly images: ServableImages,
  ) {}

  async execute(regionId: string): Promise<ServerOptions> {
    const snapshot = await this.queries.offerSnapshot(regionId);
    const options = snapshot && serverOptions(snapshot);
    if (!options) throw notFound(snapshot ? `Region ${regionId} sells no servers` : `Region ${regionId} not found`);
    const servable = this.images.servableImages();
    return servable === null ? options : { ...options, images: options.images.filter((i) => servable.includes(i.id)) };
  }
}
