import { ServerOfferSnapshot } from '../domain/server-options';

/** Read side of the server catalog: what GET /v1/server-options shows, in one SQL round trip. */
export abstract class ServerCatalogQueries {
  /** The region's server offer, counter, switches, zones, plans and the images; undefined when the region does not exist. */
  abstract offerSnapshot(regionId: string): Promise<ServerOfferSnapshot | undefined>;
}
