/** A snapshot a purchase restores from, as the disk purchase needs it. */
export interface SnapshotSource {
  id: string;
  status: string;
  regionId: string;
  type: string;
  sizeGb: number;
}

/**
 * The snapshots a new disk may be restored from (POST /v1/volumes with snapshot_id). The row is
 * locked FOR SHARE in the purchase's transaction: a deletion of the snapshot waits for the purchase
 * to commit (and a restore accepted before a deletion then fails at the provider, its money given back).
 */
export abstract class SnapshotSources {
  /** The organization's snapshot, share-locked; undefined when it does not exist (or is another organization's). */
  abstract lockForRestore(orgId: string, snapshotId: string): Promise<SnapshotSource | undefined>;
}
