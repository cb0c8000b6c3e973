import { Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { DomainError } from '../../../shared/kernel/errors/domain-error';
import { StepUnavailable } from './operation-executors';

/** Consecutive failed calls after which a provider counts as down (lifecycle.md, servers.md). */
export const CIRCUIT_THRESHOLD = 5;
/** How often a provider is probed (its ping) between calls. */
export const PROVIDER_PROBE_INTERVAL_MS = 1_000;

/** What a provider adapter throws when the provider could not answer (down, timed out, a fault). */
export interface ProviderUnavailableClass {
  new (...args: never[]): Error;
}

/**
 * The circuit and failure classes every provider gateway shares (the storage provider's and the
 * compute provider's; each gateway owns one circuit, kept in its process):
 *
 * - after CIRCUIT_THRESHOLD consecutive failed calls (operations' calls and the periodic probe
 *   alike) the provider is down until a call succeeds;
 * - the adapter's "unavailable" error (and any error the adapter did not classify, such as a
 *   broken connection) becomes StepUnavailable, which the worker retries with backoff within the
 *   retry window; a DomainError is the provider's final answer (the operation fails) and, being an
 *   answer, counts as a successful call.
 */
export class ProviderCircuit {
  private readonly logger: Logger;
  private consecutiveFailures = 0;
  private down = false;
  private probe: NodeJS.Timeout | undefined;

  constructor(
    private readonly options: {
      /** The logger context, e.g. StorageProvider. */
      context: string;
      /** The provider in messages, e.g. "storage provider". */
      label: string;
      unavailable: ProviderUnavailableClass;
      ping: () => Promise<unknown>;
    },
  ) {
    this.logger = new Logger(options.context);
  }

  /** Probes at once, then every PROVIDER_PROBE_INTERVAL_MS (the timer does not keep the process alive). */
  start(): void {
    void this.probeOnce();
    this.probe = setInterval(() => void this.probeOnce(), PROVIDER_PROBE_INTERVAL_MS);
    this.probe.unref();
  }

  stop(): void {
    clearInterval(this.probe);
  }

  isDown(): boolean {
    return this.down;
  }

  /** One probe; its outcome counts like a call's. */
  async probeOnce(): Promise<void> {
    try {
      await this.call(() => this.options.ping());
    } catch {
      // counted by call()
    }
  }

  async call<T>(work: () => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await work();
    } catch (err) {
      if (err instanceof DomainError) {
        this.succeeded();
        throw err;
      }
      this.failed();
      throw new StepUnavailable(
        err instanceof this.options.unavailable
          ? err.message
          : `The ${this.options.label} could not be reached: ${err instanceof Error ? err.message : String(err)}`,
        'provider_unavailable',
        this.options.label,
      );
    }
    this.succeeded();
    return result;
  }

  private succeeded(): void {
    this.consecutiveFailures = 0;
    if (this.down) {
      this.down = false;
      this.logger.log({ msg: `${this.options.label} is back: circuit closed` });
    }
  }

  private failed(): void {
    this.consecutiveFailures += 1;
    if (!this.down && this.consecutiveFailures >= CIRCUIT_THRESHOLD) {
      this.down = true;
      this.logger.warn({ msg: `${this.options.label} is down: circuit open`, consecutive_failures: this.consecutiveFailures });
    }
  }
}

/**
 * What every provider gateway (storage, compute, the compute provider's apps) shares: one circuit
 * of its own, probed from the application's start to its end, `isDown` for the health checks and
 * the 503s, and `call` for each call to the port it wraps.
 */
export abstract class CircuitGateway implements OnApplicationBootstrap, OnModuleDestroy {
  protected readonly circuit: ProviderCircuit;

  protected constructor(options: ConstructorParameters<typeof ProviderCircuit>[0]) {
    this.circuit = new ProviderCircuit(options);
  }

  onApplicationBootstrap(): void {
    this.circuit.start();
  }

  onModuleDestroy(): void {
    this.circuit.stop();
  }

  isDown(): boolean {
    return this.circuit.isDown();
  }

  /** One probe; its outcome counts like a call's. */
  probeOnce(): Promise<void> {
    return this.circuit.probeOnce();
  }

  protected call<T>(work: () => Promise<T>): Promise<T> {
    return this.circuit.call(work);
  }
}
