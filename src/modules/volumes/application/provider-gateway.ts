import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { DomainError } from '../../../shared/kernel/errors/domain-error';
import { StepUnavailable } from '../../operations/application/operation-executors';
import { BlockStorage, DiskPage, ProviderDisk, ProviderHealth, ProviderUnavailable } from './block-storage.port';

/** Consecutive failed calls after which the provider counts as down (lifecycle.md). */
export const CIRCUIT_THRESHOLD = 5;
/** How often the gateway probes the provider (BlockStorage.ping) between calls. */
export const PROVIDER_PROBE_INTERVAL_MS = 1_000;

/**
 * The worker's and the readiness probe's way to the storage provider (application layer, so a
 * real provider adapter replaces the simulated one without touching it):
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
export class ProviderGateway extends ProviderHealth implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('StorageProvider');
  private consecutiveFailures = 0;
  private down = false;
  private probe: NodeJS.Timeout | undefined;

  constructor(private readonly storage: BlockStorage) {
    super();
  }

  onApplicationBootstrap(): void {
    void this.probeOnce();
    this.probe = setInterval(() => void this.probeOnce(), PROVIDER_PROBE_INTERVAL_MS);
    this.probe.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.probe);
  }

  isDown(): boolean {
    return this.down;
  }

  /** One probe; its outcome counts like a call's. */
  async probeOnce(): Promise<void> {
    try {
      await this.call(() => this.storage.ping());
    } catch {
      // counted by call()
    }
  }

  createDisk(input: { volumeId: string; step: string; zoneId: string; sizeGb: number; type: string }): Promise<ProviderDisk> {
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
  deleteDisk(input: { volumeId: string; step: string }): Promise<void> {
    return this.call(() => this.storage.deleteDisk(input));
  }
  listDisks(page?: DiskPage): Promise<ProviderDisk[]> {
    return this.call(() => this.storage.listDisks(page));
  }
  getDisk(volumeId: string): Promise<ProviderDisk | null> {
    return this.call(() => this.storage.getDisk(volumeId));
  }

  private async call<T>(work: () => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await work();
    } catch (err) {
      if (err instanceof DomainError) {
        this.succeeded();
        throw err;
      }
      this.failed();
      throw new StepUnavailable(err instanceof ProviderUnavailable ? err.message : `The storage provider could not be reached: ${err instanceof Error ? err.message : String(err)}`);
    }
    this.succeeded();
    return result;
  }

  private succeeded(): void {
    this.consecutiveFailures = 0;
    if (this.down) {
      this.down = false;
      this.logger.log({ msg: 'storage provider is back: circuit closed' });
    }
  }

  private failed(): void {
    this.consecutiveFailures += 1;
    if (!this.down && this.consecutiveFailures >= CIRCUIT_THRESHOLD) {
      this.down = true;
      this.logger.warn({ msg: 'storage provider is down: circuit open', consecutive_failures: this.consecutiveFailures });
    }
  }
}
