/**
 * The disks of volumes an operator seeds (seed-format.md) exist at the provider already: the
 * seed loader tells the provider adapter, in the seed's transaction. The simulated provider
 * records them in its table; a real provider's adapter has nothing to do.
 */
export abstract class SeededDisks {
  abstract adopt(volumeIds: readonly string[]): Promise<void>;
}
