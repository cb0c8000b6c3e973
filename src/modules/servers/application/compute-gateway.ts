import { Injectable } from '@nestjs/common';
import { CircuitGateway } from '../../operations/application/provider-circuit';
import {
  ComputeHealth, ComputeProvider, ComputeUnavailable, InstancePage, ProviderAddress, ProviderAddresses, ProviderNetworkAttachment, ProviderConsole, ProviderFirewallRule, ProviderImage, ProviderInstance, ServableImages,
} from './compute-provider.port';

type Step = { serverId: string; step: string };

/**
 * The worker's, the HTTP actions' and the readiness probe's way to the compute provider
 * (application layer, so a real provider adapter replaces the simulated one without touching it),
 * through the circuit every provider gateway shares (ProviderCircuit), as the storage provider's
 * ProviderGateway:
 *
 * - the circuit: after CIRCUIT_THRESHOLD consecutive failed calls (operations' calls and the
 *   periodic probe alike) the provider is down until a call succeeds; kept in each process;
 * - failure classes: ComputeUnavailable (and any error the adapter did not classify, such as a
 *   broken connection) becomes StepUnavailable, which the worker retries with backoff within the
 *   retry window; a DomainError is the provider's final answer (the operation fails) and, being an
 *   answer, counts as a successful call.
 *
 * It is the ComputeHealth that purchases, power actions, deletes and consoles consult (503
 * provider_unavailable while down) and GET /v1/ready reports. Each successful probe also asks the
 * provider which images it can serve now (servableImages: what server-options and purchases offer).
 */
@Injectable()
export class ComputeGateway extends CircuitGateway implements ComputeHealth, ServableImages {
  private readonly known: { images: string[] | null };

  constructor(private readonly compute: ComputeProvider) {
    const known: { images: string[] | null } = { images: null };
    super({
      context: 'ComputeProvider',
      label: 'compute provider',
      unavailable: ComputeUnavailable,
      ping: async () => {
        await compute.ping();
        known.images = await compute.listImages();
      },
    });
    this.known = known;
  }

  servableImages(): string[] | null {
    return this.known.images;
  }

  createInstance(input: Parameters<ComputeProvider['createInstance']>[0]): Promise<ProviderInstance> {
    return this.call(() => this.compute.createInstance(input));
  }
  awaitBoot(input: Step): Promise<ProviderInstance> {
    return this.call(() => this.compute.awaitBoot(input));
  }
  powerOn(input: Step): Promise<ProviderInstance> {
    return this.call(() => this.compute.powerOn(input));
  }
  shutdown(input: Step): Promise<ProviderInstance> {
    return this.call(() => this.compute.shutdown(input));
  }
  powerOff(input: Step): Promise<ProviderInstance> {
    return this.call(() => this.compute.powerOff(input));
  }
  reboot(input: Step): Promise<ProviderInstance> {
    return this.call(() => this.compute.reboot(input));
  }
  reset(input: Step): Promise<ProviderInstance> {
    return this.call(() => this.compute.reset(input));
  }
  resizeInstance(input: Parameters<ComputeProvider['resizeInstance']>[0]): Promise<ProviderInstance> {
    return this.call(() => this.compute.resizeInstance(input));
  }
  rebuildInstance(input: Parameters<ComputeProvider['rebuildInstance']>[0]): Promise<ProviderInstance> {
    return this.call(() => this.compute.rebuildInstance(input));
  }
  deleteInstance(input: Step): Promise<void> {
    return this.call(() => this.compute.deleteInstance(input));
  }
  createConsole(input: { serverId: string; step?: string; expiresAt: Date }): Promise<ProviderConsole> {
    return this.call(() => this.compute.createConsole(input));
  }
  getInstance(serverId: string): Promise<ProviderInstance | null> {
    return this.call(() => this.compute.getInstance(serverId));
  }
  listInstances(page?: InstancePage): Promise<ProviderInstance[]> {
    return this.call(() => this.compute.listInstances(page));
  }
  applyFirewall(input: { serverId: string; rules: ProviderFirewallRule[] }): Promise<void> {
    return this.call(() => this.compute.applyFirewall(input));
  }
  createImage(input: { imageId: string; step: string; serverId: string }): Promise<ProviderImage> {
    return this.call(() => this.compute.createImage(input));
  }
  deleteImage(input: { imageId: string; step: string }): Promise<void> {
    return this.call(() => this.compute.deleteImage(input));
  }
  getImage(imageId: string): Promise<ProviderImage | null> {
    return this.call(() => this.compute.getImage(imageId));
  }
  listServerImages(page?: { after?: string; limit: number }): Promise<ProviderImage[]> {
    return this.call(() => this.compute.listServerImages(page));
  }
  assignAddress(input: { addressId: string; step: string; ip: string; serverId: string }): Promise<ProviderAddress> {
    return this.call(() => this.compute.assignAddress(input));
  }
  unassignAddress(input: { addressId: string; step: string; ip: string }): Promise<ProviderAddress> {
    return this.call(() => this.compute.unassignAddress(input));
  }
  getAddress(addressId: string): Promise<ProviderAddress | null> {
    return this.call(() => this.compute.getAddress(addressId));
  }
  listAssignedAddresses(): Promise<ProviderAddress[]> {
    return this.call(() => this.compute.listAssignedAddresses());
  }
  assignIpv6(input: Parameters<ComputeProvider['assignIpv6']>[0]): Promise<void> {
    return this.call(() => this.compute.assignIpv6(input));
  }
  attachNetwork(input: Parameters<ComputeProvider['attachNetwork']>[0]): Promise<ProviderNetworkAttachment> {
    return this.call(() => this.compute.attachNetwork(input));
  }
  detachNetwork(input: Parameters<ComputeProvider['detachNetwork']>[0]): Promise<void> {
    return this.call(() => this.compute.detachNetwork(input));
  }
  getAddresses(serverId: string): Promise<ProviderAddresses | null> {
    return this.call(() => this.compute.getAddresses(serverId));
  }
  listAddresses(): Promise<ProviderAddresses[]> {
    return this.call(() => this.compute.listAddresses());
  }
}
