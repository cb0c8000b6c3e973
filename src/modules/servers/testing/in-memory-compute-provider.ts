import { createHash, randomBytes } from 'node:crypto';
import {
  ComputeProvider, ComputeUnavailable, InstancePage, ProviderAddress, ProviderAddresses, ProviderConsole, ProviderFirewallRule, ProviderImage, ProviderInstance, ProviderNetworkAttachment,
} from '../application/compute-provider.port';
import { invalidState } from '../../../shared/kernel/errors/domain-error';
import { ComputeCallInput, SimulatedInstance, checkConsole, simulateComputeCall, simulatedConsoleUrl, userDataBytes } from '../domain/simulated-instance';

const copy = (i: SimulatedInstance): SimulatedInstance => ({ ...i });
const toProviderInstance = (i: SimulatedInstance): ProviderInstance => ({
  instanceId: i.instanceId, serverId: i.serverId, zoneId: i.zoneId, vcpus: i.vcpus, memoryGb: i.memoryGb, diskGb: i.diskGb, image: i.image, ipv4: i.ipv4, power: i.power,
});

type Step = { serverId: string; step: string };

/**
 * The simulated compute provider's rules in memory, for unit tests: idempotent by (server, step)
 * like the database adapter. `down` fails every call; `failNext(n)` fails the next n calls (before
 * they take effect); `loseNextAnswer()` lets the next call take effect and then fails it.
 * `effective` lists the calls that took effect. `acpiIgnoredImages` plays
 * SIMULATED_ACPI_IGNORED_IMAGES; `adopt()` plays the adoption of a seeded server. Addresses come
 * from 100.64.0.0/10 in order, never reused.
 */
export class InMemoryComputeProvider extends ComputeProvider {
  /** Every instance ever made, live or deleted, by instance id. */
  readonly instances = new Map<string, SimulatedInstance>();
  readonly recorded = new Map<string, SimulatedInstance | undefined>();
  readonly effective: { serverId: string; step: string; action: string }[] = [];
  readonly acpiIgnoredImages = new Set<string>();
  /** Console credentials by key (server and step, or a sequence): the SHA-256 of token and password only. */
  readonly consoles = new Map<string, { serverId: string; instanceId: string; tokenHash: string; passwordHash: string; expiresAt: Date }>();
  down = false;
  private failing = 0;
  private loseAnswer = false;
  private sequence = 0;
  private addresses = 0;

  failNext(n: number): void {
    this.failing = n;
  }

  loseNextAnswer(): void {
    this.loseAnswer = true;
  }

  /** A seeded server's instance: running, with the server's address and no specs. */
  adopt(serverId: string, zoneId: string, ipv4: string): ProviderInstance {
    const instance: SimulatedInstance = {
      instanceId: `ins_${++this.sequence}`, serverId, zoneId, vcpus: null, memoryGb: null, diskGb: null, image: null, ipv4, power: 'running',
      sshKeyCount: 0, userDataBytes: 0, ignoresAcpi: false, deleted: false,
    };
    this.instances.set(instance.instanceId, instance);
    return toProviderInstance(instance);
  }

  /** The server's live instance (or its latest deleted one) as the simulator keeps it, for assertions. */
  simulated(serverId: string): SimulatedInstance | undefined {
    const all = [...this.instances.values()].filter((i) => i.serverId === serverId);
    return all.find((i) => !i.deleted) ?? all[all.length - 1];
  }

  async createInstance(input: {
    serverId: string; step: string; hostname?: string; zoneId: string; vcpus: number; memoryGb: number; diskGb: number; image: string; sshPublicKeys: string[]; userData: string | null;
  }): Promise<ProviderInstance> {
    return this.instance(
      this.call(input.step, {
        action: 'create', serverId: input.serverId, instanceId: `ins_${++this.sequence}`, zoneId: input.zoneId, vcpus: input.vcpus, memoryGb: input.memoryGb,
        diskGb: input.diskGb, image: input.image, ipv4: '', sshKeyCount: input.sshPublicKeys.length, userDataBytes: userDataBytes(input.userData),
        ignoresAcpi: this.acpiIgnoredImages.has(input.image),
      }),
    );
  }
  async awaitBoot(input: Step): Promise<ProviderInstance> {
    return this.instance(this.call(input.step, { action: 'await_boot', serverId: input.serverId }));
  }
  async powerOn(input: Step): Promise<ProviderInstance> {
    return this.instance(this.call(input.step, { action: 'power_on', serverId: input.serverId }));
  }
  async shutdown(input: Step): Promise<ProviderInstance> {
    return this.instance(this.call(input.step, { action: 'shutdown', serverId: input.serverId }));
  }
  async powerOff(input: Step): Promise<ProviderInstance> {
    return this.instance(this.call(input.step, { action: 'power_off', serverId: input.serverId }));
  }
  async reboot(input: Step): Promise<ProviderInstance> {
    return this.instance(this.call(input.step, { action: 'reboot', serverId: input.serverId }));
  }
  async reset(input: Step): Promise<ProviderInstance> {
    return this.instance(this.call(input.step, { action: 'reset', serverId: input.serverId }));
  }
  async resizeInstance(input: { serverId: string; step: string; vcpus: number; memoryGb: number; diskGb: number }): Promise<ProviderInstance> {
    return this.instance(this.call(input.step, { action: 'resize', serverId: input.serverId, vcpus: input.vcpus, memoryGb: input.memoryGb, diskGb: input.diskGb }));
  }
  async rebuildInstance(input: { serverId: string; step: string; image: string; sshPublicKeys: string[]; userData: string | null }): Promise<ProviderInstance> {
    return this.instance(
      this.call(input.step, { action: 'rebuild', serverId: input.serverId, image: input.image, sshKeyCount: input.sshPublicKeys.length, userDataBytes: userDataBytes(input.userData) }),
    );
  }
  async deleteInstance(input: Step): Promise<void> {
    this.call(input.step, { action: 'delete', serverId: input.serverId });
    for (const a of this.routed.values()) if (a.serverId === input.serverId) a.serverId = null;
  }
  async createConsole(input: { serverId: string; step?: string; expiresAt: Date }): Promise<ProviderConsole> {
    this.before();
    const instance = checkConsole(this.simulated(input.serverId), input.serverId);
    const token = randomBytes(16).toString('hex');
    const password = randomBytes(12).toString('hex').slice(0, 24);
    const hash = (t: string) => createHash('sha256').update(t).digest('hex');
    this.consoles.set(input.step ? `${input.serverId}|${input.step}` : `#${++this.sequence}`, {
      serverId: input.serverId, instanceId: instance.instanceId, tokenHash: hash(token), passwordHash: hash(password), expiresAt: input.expiresAt,
    });
    return { type: 'vnc', url: simulatedConsoleUrl(instance.instanceId, token), password, expiresAt: input.expiresAt };
  }
  async getInstance(serverId: string): Promise<ProviderInstance | null> {
    this.before();
    const live = [...this.instances.values()].find((i) => i.serverId === serverId && !i.deleted);
    return live ? toProviderInstance(live) : null;
  }
  async listInstances(page?: InstancePage): Promise<ProviderInstance[]> {
    this.before();
    const live = [...this.instances.values()].filter((i) => !i.deleted).sort((a, b) => (a.serverId < b.serverId ? -1 : a.serverId > b.serverId ? 1 : 0));
    return live.filter((i) => i.serverId > (page?.after ?? '')).slice(0, page?.limit).map(toProviderInstance);
  }
  async ping(): Promise<void> {
    if (this.down) throw new ComputeUnavailable('down (test)');
  }
  /** The rules last applied to each server (the simulator's rules table plays the firewall; this records what was pushed). */
  readonly firewalls = new Map<string, ProviderFirewallRule[]>();
  async applyFirewall(input: { serverId: string; rules: ProviderFirewallRule[] }): Promise<void> {
    this.before();
    this.firewalls.set(input.serverId, input.rules);
  }
  readonly serverImages = new Map<string, ProviderImage & { deleted: boolean }>();
  async createImage(input: { imageId: string; step: string; serverId: string }): Promise<ProviderImage> {
    this.before();
    const prior = this.serverImages.get(input.imageId);
    if (prior) {
      if (prior.deleted) throw invalidState(`Image ${input.imageId} was deleted at the compute provider`);
      return { ...prior };
    }
    const live = [...this.instances.values()].find((i) => i.serverId === input.serverId && !i.deleted);
    if (!live) throw invalidState(`The compute provider has no instance for server ${input.serverId}`);
    const made = { providerId: `pimg_${++this.sequence}`, imageId: input.imageId, serverId: live.serverId, zoneId: live.zoneId, diskGb: live.diskGb, sourceImage: live.image, deleted: false };
    this.serverImages.set(input.imageId, made);
    return { ...made };
  }
  async deleteImage(input: { imageId: string; step: string }): Promise<void> {
    this.before();
    const i = this.serverImages.get(input.imageId);
    if (i) i.deleted = true;
  }
  async getImage(imageId: string): Promise<ProviderImage | null> {
    this.before();
    const i = this.serverImages.get(imageId);
    return i && !i.deleted ? { ...i } : null;
  }
  async listServerImages(page?: { after?: string; limit: number }): Promise<ProviderImage[]> {
    this.before();
    const live = [...this.serverImages.values()].filter((i) => !i.deleted && i.imageId > (page?.after ?? '')).sort((a, b) => (a.imageId < b.imageId ? -1 : 1));
    return live.slice(0, page?.limit ?? live.length).map((i) => ({ ...i }));
  }
  /** Reserved addresses by address id, and each call's answer by `<address>|<step>`. */
  readonly routed = new Map<string, ProviderAddress>();
  private readonly addressCalls = new Map<string, ProviderAddress>();
  async assignAddress(input: { addressId: string; step: string; ip: string; serverId: string }): Promise<ProviderAddress> {
    this.before();
    const key = `${input.addressId}|${input.step}`;
    const prior = this.addressCalls.get(key);
    if (prior) return { ...prior };
    if (!this.simulated(input.serverId) || this.simulated(input.serverId)!.deleted) throw invalidState(`No instance for server ${input.serverId}`);
    const a = { addressId: input.addressId, ip: input.ip, serverId: input.serverId };
    this.routed.set(input.addressId, a);
    this.addressCalls.set(key, { ...a });
    return { ...a };
  }
  async unassignAddress(input: { addressId: string; step: string; ip: string }): Promise<ProviderAddress> {
    this.before();
    const key = `${input.addressId}|${input.step}`;
    const prior = this.addressCalls.get(key);
    if (prior) return { ...prior };
    const a = { addressId: input.addressId, ip: input.ip, serverId: null };
    this.routed.set(input.addressId, a);
    this.addressCalls.set(key, { ...a });
    return { ...a };
  }
  async getAddress(addressId: string): Promise<ProviderAddress | null> {
    this.before();
    const a = this.routed.get(addressId);
    return a ? { ...a } : null;
  }
  async listAssignedAddresses(): Promise<ProviderAddress[]> {
    this.before();
    return [...this.routed.values()].filter((a) => a.serverId !== null).map((a) => ({ ...a }));
  }
  /** IPv6 addresses routed, by server; attachments by server, then network. */
  readonly ipv6 = new Map<string, string>();
  readonly attachments = new Map<string, Map<string, ProviderNetworkAttachment>>();

  private live(serverId: string): SimulatedInstance | undefined {
    const i = this.simulated(serverId);
    return i && !i.deleted ? i : undefined;
  }

  /** A changing address call, idempotent by (server, step) like the instance calls. */
  private addressCall<T>(serverId: string, step: string, action: string, work: () => T): T {
    this.before();
    const key = `${serverId}|${step}`;
    let answer: T;
    if (this.recordedAddresses.has(key)) {
      answer = this.recordedAddresses.get(key) as T;
    } else {
      answer = work();
      this.recordedAddresses.set(key, answer);
      this.effective.push({ serverId, step, action });
    }
    if (this.loseAnswer) {
      this.loseAnswer = false;
      throw new ComputeUnavailable('answer lost (test)');
    }
    return answer;
  }
  private readonly recordedAddresses = new Map<string, unknown>();

  async assignIpv6(input: { serverId: string; step: string; ipv6: string }): Promise<void> {
    this.addressCall(input.serverId, input.step, 'assign_ipv6', () => {
      if (!this.live(input.serverId)) throw invalidState(`The compute provider has no instance for server ${input.serverId}`);
      const held = this.ipv6.get(input.serverId);
      if (held !== undefined && held !== input.ipv6) throw invalidState(`Server ${input.serverId} has ${held} routed already`);
      this.ipv6.set(input.serverId, input.ipv6);
    });
  }
  async attachNetwork(input: { serverId: string; step: string; networkId: string; ipRange: string; ip: string }): Promise<ProviderNetworkAttachment> {
    return this.addressCall(input.serverId, input.step, 'attach_network', () => {
      if (!this.live(input.serverId)) throw invalidState(`The compute provider has no instance for server ${input.serverId}`);
      const mine = this.attachments.get(input.serverId) ?? new Map<string, ProviderNetworkAttachment>();
      const held = mine.get(input.networkId);
      if (held) {
        if (held.ip !== input.ip) throw invalidState(`Server ${input.serverId} is in network ${input.networkId} with ${held.ip} already`);
        return { ...held };
      }
      for (const [serverId, nets] of this.attachments) {
        if (serverId !== input.serverId && nets.get(input.networkId)?.ip === input.ip) throw invalidState(`${input.ip} is another server's in network ${input.networkId}`);
      }
      mine.set(input.networkId, { networkId: input.networkId, ip: input.ip });
      this.attachments.set(input.serverId, mine);
      return { networkId: input.networkId, ip: input.ip };
    });
  }
  async detachNetwork(input: { serverId: string; step: string; networkId: string }): Promise<void> {
    this.addressCall(input.serverId, input.step, 'detach_network', () => {
      this.attachments.get(input.serverId)?.delete(input.networkId);
    });
  }
  async getAddresses(serverId: string): Promise<ProviderAddresses | null> {
    this.before();
    if (!this.live(serverId)) return null;
    const networks = [...(this.attachments.get(serverId)?.values() ?? [])].sort((a, b) => (a.networkId < b.networkId ? -1 : 1));
    return { serverId, ipv6: this.ipv6.get(serverId) ?? null, networks: networks.map((n) => ({ ...n })) };
  }
  async listAddresses(): Promise<ProviderAddresses[]> {
    this.before();
    const ids = [...new Set([...this.ipv6.keys(), ...this.attachments.keys()])].filter((id) => this.live(id)).sort();
    return (await Promise.all(ids.map((id) => this.getAddresses(id)))).filter((a): a is ProviderAddresses => a !== null);
  }

  images: string[] | null = null;
  async listImages(): Promise<string[] | null> {
    return this.images;
  }

  private before(): void {
    if (this.down) throw new ComputeUnavailable('down (test)');
    if (this.failing > 0) {
      this.failing -= 1;
      throw new ComputeUnavailable('failed (test)');
    }
  }

  private instance(i: SimulatedInstance | undefined): ProviderInstance {
    if (!i) throw new Error('no instance answered');
    return toProviderInstance(i);
  }

  private call(step: string, input: ComputeCallInput): SimulatedInstance | undefined {
    this.before();
    const key = `${input.serverId}|${step}`;
    let answer: SimulatedInstance | undefined;
    if (this.recorded.has(key)) {
      answer = this.recorded.get(key);
    } else {
      const current = this.simulated(input.serverId);
      let call = input;
      if (call.action === 'create' && !(current && !current.deleted)) {
        this.addresses += 1;
        call = { ...call, ipv4: `100.64.${Math.floor(this.addresses / 256)}.${this.addresses % 256}` };
      }
      const after = simulateComputeCall(current && copy(current), call);
      if (after) this.instances.set(after.instanceId, copy(after));
      // A deleted instance leaves every network.
      if (input.action === 'delete') this.attachments.delete(input.serverId);
      answer = input.action === 'delete' ? undefined : after && copy(after);
      this.recorded.set(key, answer);
      this.effective.push({ serverId: input.serverId, step, action: input.action });
    }
    if (this.loseAnswer) {
      this.loseAnswer = false;
      throw new ComputeUnavailable('answer lost (test)');
    }
    return answer;
  }
}
