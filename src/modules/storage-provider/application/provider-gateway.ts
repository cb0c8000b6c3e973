import { Injectable } from '@nestjs/common';
import { CircuitGateway } from '../../operations/application/provider-circuit';
import { BlockStorage, DiskPage, ProviderDisk, ProviderHealth, ProviderSnapshot, ProviderUnavailable } from './block-storage.port';

export { CIRCUIT_THRESHOLD, PROVIDER_PROBE_INTERVAL_MS } from '../../operations/application/provider-circuit';

/**
 * The worker's and the readiness probe's way to the storage provider (application layer, so a
 * real provider adapter replaces the simulated one without touching it), through the circuit
 * every provider gateway shares (ProviderCircuit):
 *
 * - the circuit: after CIRCUIT_THRESHOLD consecutive failed calls (operations' calls and the
 *   periodic probe alike) the provider is down until a call succeeds. The circuit is kept in
 *   each process (each process learns from its own calls and probes, within a few seconds);
 * - failure classes: ProviderUnavailable (and any error the adapter did not classify, such as
 *   a broken connection to it) becomes StepUnavailable, which the worker retries with backoff
 *   within the retry window; a DomainError is the provider's final answer (the operation fails)
 *   and, being an answer, counts as a successful call for the circuit.
 */
@Injectable()
export class ProviderGateway extends CircuitGateway implements ProviderHealth {
  constructor(private readonly storage: BlockStorage) {
    super({ context: 'StorageProvider', label: 'storage provider', unavailable: ProviderUnavailable, ping: () => storage.ping() });
  }

  createDisk(input: Parameters<BlockStorage['createDisk']>[0]): Promise<ProviderDisk> {
    return this.call(() => this.storage.createDisk(input));
  }
  attachDisk(input: { volumeId: string; step: string; serverId: string }): Promise<ProviderDisk> {
    return this.call(() => this.storage.attachDisk(input));
  }
  mountDisk(input: { volumeId: string; step: string; mountPath: string }): Promise<ProviderDisk> {
    return this.call(() => this.storage.mountDisk(input));
  }
  unmountDisk(input: { volumeId: string; step: string }): Promise<ProviderDisk> {
    return this.call(() => this.storage.unmountDisk(input));
  }
  detachDisk(input: { volumeId: string; step: string }): Promise<ProviderDisk> {
    return this.call(() => this.storage.detachDisk(input));
  }
  resizeDisk(input: { volumeId: string; step: string; sizeGb: number }): Promise<ProviderDisk> {
    return this.call(() => this.storage.resizeDisk(input));
  }
  deleteDisk(input: { volumeId: string; step: string }): Promise<void> {
    return this.call(() => this.storage.deleteDisk(input));
  }
  listDisks(page?: DiskPage): Promise<ProviderDisk[]> {
    return this.call(() => this.storage.listDisks(page));
  }
  getDisk(volumeId: string): Promise<ProviderDisk | null> {
    return this.call(() => this.storage.getDisk(volumeId));
  }
  createSnapshot(input: { snapshotId: string; step: string; volumeId: string }): Promise<ProviderSnapshot> {
    return this.call(() => this.storage.createSnapshot(input));
  }
  deleteSnapshot(input: { snapshotId: string; step: string }): Promise<void> {
    return this.call(() => this.storage.deleteSnapshot(input));
  }
  getSnapshot(snapshotId: string): Promise<ProviderSnapshot | null> {
    return this.call(() => this.storage.getSnapshot(snapshotId));
  }
  listSnapshots(page?: { after?: string; limit: number }): Promise<ProviderSnapshot[]> {
    return this.call(() => this.storage.listSnapshots(page));
  }
}
