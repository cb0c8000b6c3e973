import { Injectable } from '@nestjs/common';
import { invalidState } from '../../../shared/kernel/errors/domain-error';
import { AgentInstance } from '../../../shared/agent-protocol/agent-protocol';
import { AgentHosts, GUEST_GRACE_MS } from '../../../shared/agent-protocol/agent-hosts';
import {
  ComputeProvider, ComputeUnavailable, InstancePage, ProviderAddress, ProviderAddresses, ProviderConsole, ProviderFirewallRule, ProviderImage, ProviderInstance, ProviderNetworkAttachment,
} from '../application/compute-provider.port';

type Step = { serverId: string; step: string };

const toInstance = (i: AgentInstance): ProviderInstance => ({
  instanceId: i.instance_id, serverId: i.server_id, zoneId: i.zone_id, vcpus: i.vcpus, memoryGb: i.memory_gb, diskGb: i.disk_gb, image: i.image, ipv4: i.ipv4, power: i.power,
});

/**
 * The compute provider on host agents (COMPUTE_PROVIDER=agent; docs/explanation/host-agent.md):
 * each server's instance is an LXC system container on one agent, chosen by free capacity at its
 * creation and recorded (agent_placements) before the first call, so the call retried after a lost
 * answer reaches the same host. The agent keeps every call idempotent by (server, step); reads
 * (getInstance, listInstances) are the host's real state. An agent that cannot be reached, times
 * out or fails is ComputeUnavailable (retried within the window, counted by the circuit); its
 * refusals (409) are final DomainErrors.
 */
@Injectable()
export class AgentComputeProvider extends ComputeProvider {
  private images: string[] | null = null;

  constructor(private readonly hosts: AgentHosts) {
    super();
  }

  private guard<T>(work: () => Promise<T>): Promise<T> {
    return this.hosts.guard(ComputeUnavailable, work);
  }

  /** The agent holding the server's instance; none: the server has no instance anywhere. */
  private agentOf(serverId: string): Promise<string> {
    return this.hosts.holder(serverId, 'compute');
  }

  async createInstance(input: {
    serverId: string; step: string; hostname?: string; zoneId: string; vcpus: number; memoryGb: number; diskGb: number; image: string;
    sshPublicKeys: string[]; userData: string | null;
  }): Promise<ProviderInstance> {
    if (input.image.startsWith('img_')) throw invalidState(`The host agents keep no server images; a server cannot be created from ${input.image}`);
    return this.guard(async () => {
      const agent = await this.hosts.place(input.serverId, () => this.hosts.chooseForInstance(input.vcpus, input.memoryGb, input.image));
      const body = {
        step: input.step, zone_id: input.zoneId, vcpus: input.vcpus, memory_gb: input.memoryGb, disk_gb: input.diskGb, image: input.image,
        hostname: input.hostname ?? input.serverId.replace(/_/g, '-'), ssh_public_keys: input.sshPublicKeys, user_data: input.userData,
      };
      return toInstance((await this.hosts.call<AgentInstance>(agent, 'PUT', `/v1/instances/${input.serverId}`, body))!);
    });
  }

  private action(action: string, input: Step, extraMs = 0): Promise<ProviderInstance> {
    return this.guard(async () => {
      const agent = await this.agentOf(input.serverId);
      return toInstance((await this.hosts.call<AgentInstance>(agent, 'POST', `/v1/instances/${input.serverId}/actions/${action}`, { step: input.step }, extraMs))!);
    });
  }

  awaitBoot(input: Step): Promise<ProviderInstance> {
    return this.action('await_boot', input, 90_000);
  }
  powerOn(input: Step): Promise<ProviderInstance> {
    return this.action('power_on', input);
  }
  shutdown(input: Step): Promise<ProviderInstance> {
    return this.action('shutdown', input, GUEST_GRACE_MS);
  }
  powerOff(input: Step): Promise<ProviderInstance> {
    return this.action('power_off', input);
  }
  reboot(input: Step): Promise<ProviderInstance> {
    return this.action('reboot', input, GUEST_GRACE_MS);
  }
  reset(input: Step): Promise<ProviderInstance> {
    return this.action('reset', input);
  }

  /**
   * Not supported by the host agent yet: a final refusal (the operation fails, the vCPUs and the
   * hold given back; docs/explanation/host-agent.md "Limits").
   */
  async resizeInstance(input: { serverId: string }): Promise<ProviderInstance> {
    throw invalidState(`The host agent does not change the plan of a server; server ${input.serverId} keeps its plan`);
  }

  /** Not supported by the host agent yet: a final refusal (the operation fails; nothing was charged). */
  async rebuildInstance(input: { serverId: string }): Promise<ProviderInstance> {
    throw invalidState(`The host agent does not rebuild servers; server ${input.serverId} keeps its boot disk`);
  }

  async deleteInstance(input: Step): Promise<void> {
    await this.guard(async () => {
      const agent = await this.hosts.placementOf(input.serverId);
      if (!agent) return; // never placed: never created
      await this.hosts.call(agent, 'DELETE', `/v1/instances/${input.serverId}?step=${encodeURIComponent(input.step)}`);
    });
  }

  async createConsole(input: { serverId: string; step?: string; expiresAt: Date }): Promise<ProviderConsole> {
    return this.guard(async () => {
      const agent = await this.agentOf(input.serverId);
      const c = (await this.hosts.call<{ url: string; password: string; expires_at: string }>(agent, 'POST', `/v1/instances/${input.serverId}/consoles`, {
        step: input.step, expires_at: input.expiresAt.toISOString(),
      }))!;
      return { type: 'vnc', url: c.url, password: c.password, expiresAt: input.expiresAt };
    });
  }

  async getInstance(serverId: string): Promise<ProviderInstance | null> {
    return this.guard(async () => {
      const agent = await this.hosts.placementOf(serverId);
      if (!agent) return null;
      const i = await this.hosts.call<AgentInstance>(agent, 'GET', `/v1/instances/${serverId}`);
      return i ? toInstance(i) : null;
    });
  }

  async listInstances(page?: InstancePage): Promise<ProviderInstance[]> {
    return this.guard(async () => (await this.hosts.listAll<AgentInstance>('/v1/instances', 'instances', (i) => i.server_id, page)).map(toInstance));
  }

  async applyFirewall(input: { serverId: string; rules: ProviderFirewallRule[] }): Promise<void> {
    await this.guard(async () => {
      const agent = await this.agentOf(input.serverId);
      await this.hosts.call(agent, 'PUT', `/v1/instances/${input.serverId}/firewall`, { rules: input.rules });
    });
  }

  /** The host agents keep no server images: imaging a server is refused, final for its operation. */
  async createImage(input: { imageId: string; step: string; serverId: string }): Promise<ProviderImage> {
    throw invalidState(`The host agents take no server images (server ${input.serverId})`);
  }

  async deleteImage(): Promise<void> {
    // None was ever made here.
  }

  async getImage(): Promise<ProviderImage | null> {
    return null;
  }

  async listServerImages(): Promise<ProviderImage[]> {
    return [];
  }

  /** The host agents route no reserved addresses: an assignment is refused, final for its operation. */
  async assignAddress(input: { addressId: string; step: string; ip: string; serverId: string }): Promise<ProviderAddress> {
    throw invalidState(`The host agents route no reserved addresses (server ${input.serverId})`);
  }

  async unassignAddress(input: { addressId: string; step: string; ip: string }): Promise<ProviderAddress> {
    // None was ever routed here.
    return { addressId: input.addressId, ip: input.ip, serverId: null };
  }

  async getAddress(): Promise<ProviderAddress | null> {
    return null;
  }

  async listAssignedAddresses(): Promise<ProviderAddress[]> {
    return [];
  }

  /** The host agents route no IPv6: the address stays the service's own (getAddresses reports none). */
  async assignIpv6(): Promise<void> {
    // Nothing to route on an LXC host.
  }

  /** The host agents have no private networks: attaching is refused, final for its operation. */
  async attachNetwork(input: { serverId: string; networkId: string }): Promise<ProviderNetworkAttachment> {
    throw invalidState(`The host agents have no private networks; server ${input.serverId} cannot join ${input.networkId}`);
  }

  async detachNetwork(): Promise<void> {
    // Never attached here.
  }

  async getAddresses(serverId: string): Promise<ProviderAddresses | null> {
    return (await this.getInstance(serverId)) ? { serverId, ipv6: null, networks: [] } : null;
  }

  async listAddresses(): Promise<ProviderAddresses[]> {
    return [];
  }

  /** The images some agent has ready, as of the last ping. */
  async listImages(): Promise<string[] | null> {
    return this.images;
  }

  /** Resolves when at least one agent answers (and learns which images they have ready); none: ComputeUnavailable. */
  async ping(): Promise<void> {
    const all = await this.hosts.healths();
    const up = all.filter((h) => h.health);
    if (up.length === 0) throw new ComputeUnavailable(`no host agent answered: ${all.map((h) => h.error).join('; ')}`);
    this.images = [...new Set(up.flatMap((h) => h.health!.images.filter((i) => i.status === 'ready').map((i) => i.id)))].sort();
  }
}
