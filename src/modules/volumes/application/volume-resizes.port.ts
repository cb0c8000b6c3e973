/**
 * The capacity a disk's resize reserves (volumes.resize_reserved_gb, counted in the region's
 * used_gb with the disk), written in the caller's transaction with the volume's row locked.
 */
export abstract class VolumeResizes {
  /** Reserves `addedGb` in the region's capacity for the volume's resize; 409 out_of_stock when it does not fit (the region counter's CHECK decides). */
  abstract reserve(volumeId: string, regionId: string, addedGb: number): Promise<void>;
  /** The resize took effect: the volume is `sizeGb`, its reservation ended (the added gigabytes stay counted). */
  abstract complete(volumeId: string, sizeGb: number): Promise<void>;
  /** The resize did not happen: its reservation given back. */
  abstract release(volumeId: string): Promise<void>;
}
