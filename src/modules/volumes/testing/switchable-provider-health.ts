import { ProviderHealth } from '../application/block-storage.port';

/**
 * A ProviderHealth a test switches by hand (setDown). Bound by VolumesModule until the storage
 * provider's circuit (the BlockStorage gateway) provides the real one.
 */
export class SwitchableProviderHealth extends ProviderHealth {
  private down = false;

  isDown(): boolean {
    return this.down;
  }

  setDown(down: boolean): void {
    this.down = down;
  }
}
