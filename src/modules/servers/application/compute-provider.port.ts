/**
 * The compute provider, as the worker sees it (servers.md "The compute provider and the
 * operations"), beside the storage provider's BlockStorage. Every call that changes something is
 * idempotent by (server id, step), where `step` is `<operation id>/<step name>`: called again for
 * the same server and step after a crash or a lost answer, it does not create, power or delete
 * twice and answers as the first call did. A call never runs inside a database transaction or
 * under a row lock.
 *
 * An adapter throws ComputeUnavailable when the provider cannot be reached or refuses for a while
 * (the application layer retries with backoff and keeps the circuit, as for disks); any
 * DomainError it throws is final for the operation.
 */
export type InstancePower = 'running' | 'stopped';

export interface ProviderInstance {
  /** The provider's own id of the instance. */
  instanceId: string;
  serverId: string;
  zoneId: string;
  vcpus: number | null;
  memoryGb: number | null;
  diskGb: number | null;
  image: string | null;
  /** Its public IPv4 address, kept through stop and start. */
  ipv4: string;
  power: InstancePower;
}

/** A server image the provider holds: a copy of one server's boot disk, kept after the server is gone. */
export interface ProviderImage {
  /** The provider's own id of the image. */
  providerId: string;
  imageId: string;
  /** The server whose boot disk was copied. */
  serverId: string;
  zoneId: string;
  diskGb: number | null;
  /** The image that server was installed from. */
  sourceImage: string | null;
}

/**
 * A reserved address as the provider routes it: to one server's instance, or to nothing. The
 * provider keeps an address it was ever told about (assigned or not) until the service forgets it.
 */
export interface ProviderAddress {
  addressId: string;
  ip: string;
  /** The server whose instance receives the address's traffic, or null. */
  serverId: string | null;
}

export class ComputeUnavailable extends Error {
  constructor(message = 'The compute provider is unavailable') {
    super(message);
    this.name = 'ComputeUnavailable';
  }
}

/** One page of ComputeProvider.listInstances: the instances whose server id is greater than `after` (all when unset), at most `limit`. */
export interface InstancePage {
  after?: string;
  limit: number;
}

/**
 * A console credential (servers.md "console"): a `wss://` URL carrying a one-time token, and a
 * password. The provider keeps only their hashes; the caller gives them to the user once.
 */
export interface ProviderConsole {
  type: 'vnc';
  url: string;
  /** 24 base62 characters. */
  password: string;
  expiresAt: Date;
}

/**
 * A firewall rule as the provider enforces it (servers.md "Semantics"): the canonical rule's
 * direction, protocol and port, with `addresses` its sources (in) or destinations (out).
 */
export interface ProviderFirewallRule {
  direction: 'in' | 'out';
  protocol: 'tcp' | 'udp' | 'icmp';
  port: string | null;
  addresses: string[];
}

/** A server's attachment to a private network, as the provider holds it. */
export interface ProviderNetworkAttachment {
  networkId: string;
  /** The server's private IPv4 address in the network. */
  ip: string;
}

/**
 * The provider's truth about one server's addresses besides its public IPv4: its IPv6 (the first
 * address of the /64 routed to it; null when none is routed, or when the provider does not route
 * IPv6) and its private network attachments, by network id.
 */
export interface ProviderAddresses {
  serverId: string;
  ipv6: string | null;
  networks: ProviderNetworkAttachment[];
}

/** Every changing call names the step it performs; the pair (serverId, step) is its idempotency key. */
export abstract class ComputeProvider {
  /**
   * Creates the instance (powered on, booting) with its public IPv4 address. `sshPublicKeys` and
   * `userData` are injected at creation only (never stored by the service past the step).
   * `hostname` is the server's name at purchase (absent: the provider derives one from the id).
   * Inbound traffic is denied until applyFirewall says otherwise.
   */
  abstract createInstance(input: {
    serverId: string;
    step: string;
    hostname?: string;
    zoneId: string;
    vcpus: number;
    memoryGb: number;
    diskGb: number;
    image: string;
    sshPublicKeys: string[];
    userData: string | null;
  }): Promise<ProviderInstance>;
  /** Waits until the instance answers after a power-on, boot or reboot (the `booting` steps). */
  abstract awaitBoot(input: { serverId: string; step: string }): Promise<ProviderInstance>;
  abstract powerOn(input: { serverId: string; step: string }): Promise<ProviderInstance>;
  /**
   * ACPI shutdown: the guest gets 120 s to halt. A guest that does not halt in time is a final
   * DomainError invalid_state ("stop with force").
   */
  abstract shutdown(input: { serverId: string; step: string }): Promise<ProviderInstance>;
  /** Cuts the power at once. */
  abstract powerOff(input: { serverId: string; step: string }): Promise<ProviderInstance>;
  /** ACPI reboot. */
  abstract reboot(input: { serverId: string; step: string }): Promise<ProviderInstance>;
  /** Hard reset. */
  abstract reset(input: { serverId: string; step: string }): Promise<ProviderInstance>;
  /**
   * A new console credential for the server's running instance, valid until `expiresAt` (earlier
   * ones live until they expire). Needs a live, running instance (else a DomainError
   * invalid_state). Nothing secret is kept by the provider past the answer, so a call repeated
   * with the same `step` cannot answer the same credential: it makes a new one, and the step's
   * earlier one stops working. Without a step, every call makes a new credential.
   */
  abstract createConsole(input: { serverId: string; step?: string; expiresAt: Date }): Promise<ProviderConsole>;
  /**
   * Gives the (stopped) instance a plan's resources: vCPUs, memory and boot disk (never smaller).
   * An instance that has them already answers as it is; a running one is a DomainError invalid_state.
   */
  abstract resizeInstance(input: { serverId: string; step: string; vcpus: number; memoryGb: number; diskGb: number }): Promise<ProviderInstance>;
  /**
   * Reinstalls the instance's boot disk from `image` (its data is lost; the address and the disks
   * attached stay), with `sshPublicKeys` and `userData` injected as at creation (never stored by
   * the service past the step), and powers it on (booting: awaitBoot follows).
   */
  abstract rebuildInstance(input: { serverId: string; step: string; image: string; sshPublicKeys: string[]; userData: string | null }): Promise<ProviderInstance>;
  /** Deleting an instance that does not exist (never created, or deleted already) succeeds. */
  abstract deleteInstance(input: { serverId: string; step: string }): Promise<void>;
  /**
   * The provider's truth about one server's instance: the live instance, or null when there is
   * none (never created, or deleted). A read: it changes nothing, so the worker reads it before
   * giving anything back after a call whose answer was lost.
   */
  abstract getInstance(serverId: string): Promise<ProviderInstance | null>;
  /** The provider's live instances, ordered by server id, a page at a time (cli verify, the orphan sweep). */
  abstract listInstances(page?: InstancePage): Promise<ProviderInstance[]>;
  /**
   * Makes `rules` the server's firewall (the whole set in force: organization-wide and its own),
   * replacing the previous set; the same set again changes nothing (no step: it is idempotent by
   * its content). Needs a live instance (else a DomainError invalid_state).
   */
  abstract applyFirewall(input: { serverId: string; rules: ProviderFirewallRule[] }): Promise<void>;
  /**
   * Copies the server's live instance's boot disk (running or stopped: a crash-consistent copy
   * when running) as the image `imageId`; idempotent by the image id (called again, it answers the
   * copy it made). A server without a live instance, or an image deleted already: a DomainError
   * (invalid_state). createInstance and rebuildInstance take such an image's id as `image`.
   */
  abstract createImage(input: { imageId: string; step: string; serverId: string }): Promise<ProviderImage>;
  /** Deleting an image that does not exist (never made, or deleted already) succeeds. */
  abstract deleteImage(input: { imageId: string; step: string }): Promise<void>;
  /** The provider's truth about one image: the live copy, or null (never made, or deleted). A read. */
  abstract getImage(imageId: string): Promise<ProviderImage | null>;
  /**
   * The provider's live server images, ordered by image id (cli verify; and the orphan sweep, a
   * page at a time: with `page`, at most `limit` of them, those whose image id comes after `after`).
   */
  abstract listServerImages(page?: { after?: string; limit: number }): Promise<ProviderImage[]>;
  /**
   * Routes the reserved address `ip` (the service's `addressId`) to the server's live instance,
   * beside its own ipv4, moving it from any other server it was routed to. Idempotent by
   * (addressId, step): called again it answers as the first call did. A server without a live
   * instance: a DomainError (invalid_state). When an instance is deleted, the addresses routed to
   * it are routed to nothing (kept).
   */
  abstract assignAddress(input: { addressId: string; step: string; ip: string; serverId: string }): Promise<ProviderAddress>;
  /** Routes the address to nothing (an address routed to nothing, or unknown, answers so). Idempotent by (addressId, step). */
  abstract unassignAddress(input: { addressId: string; step: string; ip: string }): Promise<ProviderAddress>;
  /** The provider's truth about one address: where it routes it, or null when it never heard of it. A read. */
  abstract getAddress(addressId: string): Promise<ProviderAddress | null>;
  /** Every address the provider routes to a server (cli verify, the reconciliation sweep), by address id. */
  abstract listAssignedAddresses(): Promise<ProviderAddress[]>;
  /**
   * The catalog images the provider can create instances from now (GET /v1/server-options shows
   * only those); null: any image of the catalog.
   */
  abstract listImages(): Promise<string[] | null>;
  /**
   * Routes the /64 whose first address is `ipv6` to the server's live instance (the address the
   * service chose from its region's prefix). The same address again changes nothing; another one
   * for a server that has one is a DomainError (invalid_state), as is a server without a live
   * instance. Idempotent by (server id, step).
   */
  abstract assignIpv6(input: { serverId: string; step: string; ipv6: string }): Promise<void>;
  /**
   * Attaches the server's live instance to the private network `networkId` (range `ipRange`) with
   * the address `ip`. Already attached with that address: answers as it is. A DomainError
   * (invalid_state) when the server has no live instance, is attached to it with another address,
   * or the address is another server's in that network. Idempotent by (server id, step).
   */
  abstract attachNetwork(input: { serverId: string; step: string; networkId: string; ipRange: string; ip: string }): Promise<ProviderNetworkAttachment>;
  /** Detaches the server from the network; a server not attached (or without an instance) succeeds. Idempotent by (server id, step). */
  abstract detachNetwork(input: { serverId: string; step: string; networkId: string }): Promise<void>;
  /**
   * The provider's truth about the server's IPv6 and attachments: null when it has no live
   * instance. A read: the worker reads it before giving anything back after a lost answer.
   * Deleting an instance detaches it from every network.
   */
  abstract getAddresses(serverId: string): Promise<ProviderAddresses | null>;
  /** The addresses of every live instance that has an IPv6 or an attachment, ordered by server id (cli verify, the reconciliation sweep). */
  abstract listAddresses(): Promise<ProviderAddresses[]>;
  /** A cheap health probe: resolves when the provider answers, throws ComputeUnavailable otherwise. */
  abstract ping(): Promise<void>;
}

/**
 * Whether the compute provider is known to be down (its circuit is open). New purchases, power
 * actions and deletes answer 503 provider_unavailable while it is, recording nothing; GET
 * /v1/ready reports it as checks.compute_provider.
 */
export abstract class ComputeHealth {
  abstract isDown(): boolean;
}

/** The images the compute provider said it can serve at its last probe (null: any, or not known yet): what server-options and purchases offer. */
export abstract class ServableImages {
  abstract servableImages(): string[] | null;
}
