import { Injectable } from '@nestjs/common';
import { notFound } from '../../../shared/kernel/errors/domain-error';
import { ServerOptions, serverOptions } from '../domain/server-options';
import { ServerCatalogQueries } from './server-catalog-queries.port';

/**
 * GET /v1/server-options: read at every request, never cached (stock and the purchase switches
 * must be what the next purchase sees). An unknown region, or one selling no servers: 404.
 */
@Injectable()
export class GetServerOptions {
  constructor(private readonly queries: ServerCatalogQueries) {}

  async execute(regionId: string): Promise<ServerOptions> {
    const snapshot = await this.queries.offerSnapshot(regionId);
    const options = snapshot && serverOptions(snapshot);
    if (!options) throw notFound(snapshot ? `Region ${regionId} sells no servers` : `Region ${regionId} not found`);
    return options;
  }
}
