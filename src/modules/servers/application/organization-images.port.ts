/** An organization's server image as a purchase or a rebuild needs it (the images module owns the rest). */
export interface UsableImage {
  id: string;
  regionId: string;
  diskGb: number;
  status: 'creating' | 'available' | 'suspended' | 'deleting' | 'deleted';
}

/** The organization's images (`img_…`) that POST /v1/servers and rebuild take as `image`. */
export abstract class OrganizationImages {
  /**
   * The organization's image, its row share-locked until the transaction ends (a deletion waits
   * for the purchase or rebuild that uses it); undefined when it is not the organization's.
   */
  abstract lockForUse(orgId: string, id: string): Promise<UsableImage | undefined>;
}
