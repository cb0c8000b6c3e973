import { Injectable } from '@nestjs/common';
import { RegionSummary } from '../domain/volume-options';
import { CatalogQueries } from './catalog-queries.port';

/** GET /v1/regions: every region with the disk types it sells and its zones, by id (one SQL round trip). */
@Injectable()
export class ListRegions {
  constructor(private readonly queries: CatalogQueries) {}

  async execute(): Promise<RegionSummary[]> {
    const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
    const regions = await this.queries.regions();
    return [...regions]
      .sort((a, b) => compare(a.id, b.id))
      .map((r) => ({ ...r, volumeTypes: [...r.volumeTypes].sort(compare), zones: [...r.zones].sort((a, b) => compare(a.id, b.id)) }));
  }
}
