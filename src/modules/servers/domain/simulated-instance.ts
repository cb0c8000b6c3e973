import { DomainError, invalidState } from '../../../shared/kernel/errors/domain-error';

/** What the simulated compute provider knows of one instance (its own table, or the in-memory adapter's map). Nothing secret. */
export interface SimulatedInstance {
  instanceId: string;
  serverId: string;
  zoneId: string;
  vcpus: number | null;
  memoryGb: number | null;
  diskGb: number | null;
  image: string | null;
  ipv4: string;
  power: 'running' | 'stopped';
  /** How many SSH keys were injected at creation (the keys themselves are not kept). */
  sshKeyCount: number;
  /** The byte count of the user_data given at creation (the data itself is never kept). */
  userDataBytes: number;
  /** The guest does not halt on an ACPI shutdown (SIMULATED_ACPI_IGNORED_IMAGES, or set by a test). */
  ignoresAcpi: boolean;
  deleted: boolean;
}

export type ComputeAction = 'create' | 'await_boot' | 'power_on' | 'shutdown' | 'power_off' | 'reboot' | 'reset' | 'delete' | 'resize' | 'rebuild';

export type ComputeCallInput =
  | {
      action: 'create';
      serverId: string;
      instanceId: string;
      zoneId: string;
      vcpus: number;
      memoryGb: number;
      diskGb: number;
      image: string;
      /** Allocated by the adapter (unique among live instances). */
      ipv4: string;
      sshKeyCount: number;
      userDataBytes: number;
      ignoresAcpi: boolean;
    }
  | { action: 'resize'; serverId: string; vcpus: number; memoryGb: number; diskGb: number }
  | { action: 'rebuild'; serverId: string; image: string; sshKeyCount: number; userDataBytes: number }
  | { action: Exclude<ComputeAction, 'create' | 'resize' | 'rebuild'>; serverId: string };

/** How long a guest gets to halt after an ACPI shutdown (not waited for by the simulator: a guest ignoring ACPI is refused at once). */
export const ACPI_SHUTDOWN_TIMEOUT_S = 120;

const noInstance = (serverId: string): DomainError => invalidState(`The compute provider has no instance for server ${serverId}`);

/**
 * The simulated provider's rules, shared by its database adapter and the in-memory one: the
 * instance after the call (`instance` before it; undefined when the server has none). A refusal
 * is a DomainError (final for the operation).
 *
 * - create: a new instance, running, with its address; the server's live instance when it has one
 *   already; refused when its instance was deleted (a server is never created twice).
 * - shutdown (ACPI): stopped, unless the guest ignores ACPI: then invalid_state ("stop with force"),
 *   answered at once (the real provider's 120 s wait is not simulated).
 * - power_off: stopped; power_on, reboot, reset: running; await_boot: the instance when running,
 *   invalid_state when it is stopped.
 * - resize: the plan's resources, only while stopped (the boot disk never shrinks); rebuild: the
 *   image reinstalled, powered on.
 * - delete: deleted; an instance that does not exist (never made, or deleted already) succeeds.
 */
export function simulateComputeCall(instance: SimulatedInstance | undefined, input: ComputeCallInput): SimulatedInstance | undefined {
  const live = instance && !instance.deleted ? instance : undefined;
  switch (input.action) {
    case 'create':
      if (live) return live;
      if (instance) throw invalidState(`The instance of server ${input.serverId} was deleted; it cannot be created again`);
      return {
        instanceId: input.instanceId,
        serverId: input.serverId,
        zoneId: input.zoneId,
        vcpus: input.vcpus,
        memoryGb: input.memoryGb,
        diskGb: input.diskGb,
        image: input.image,
        ipv4: input.ipv4,
        power: 'running',
        sshKeyCount: input.sshKeyCount,
        userDataBytes: input.userDataBytes,
        ignoresAcpi: input.ignoresAcpi,
        deleted: false,
      };
    case 'await_boot':
      if (!live) throw noInstance(input.serverId);
      if (live.power !== 'running') throw invalidState(`The instance of server ${input.serverId} is stopped; it does not boot until powered on`);
      return live;
    case 'power_on':
    case 'reboot':
    case 'reset':
      if (!live) throw noInstance(input.serverId);
      return { ...live, power: 'running' };
    case 'shutdown':
      if (!live) throw noInstance(input.serverId);
      if (live.power === 'running' && live.ignoresAcpi) {
        throw invalidState(
          `The guest of server ${input.serverId} did not halt within ${ACPI_SHUTDOWN_TIMEOUT_S} s of the ACPI shutdown; stop it with force`,
        );
      }
      return { ...live, power: 'stopped' };
    case 'power_off':
      if (!live) throw noInstance(input.serverId);
      return { ...live, power: 'stopped' };
    case 'resize':
      if (!live) throw noInstance(input.serverId);
      if (live.vcpus === input.vcpus && live.memoryGb === input.memoryGb && live.diskGb === input.diskGb) return live;
      if (live.power !== 'stopped') throw invalidState(`The instance of server ${input.serverId} is running; it is resized only when stopped`);
      if (live.diskGb !== null && input.diskGb < live.diskGb) throw invalidState(`The boot disk of server ${input.serverId} cannot shrink`);
      return { ...live, vcpus: input.vcpus, memoryGb: input.memoryGb, diskGb: input.diskGb };
    case 'rebuild':
      if (!live) throw noInstance(input.serverId);
      return { ...live, image: input.image, sshKeyCount: input.sshKeyCount, userDataBytes: input.userDataBytes, power: 'running' };
    case 'delete':
      if (!live) return instance;
      return { ...live, power: 'stopped', deleted: true };
  }
}

/**
 * Whether the simulated provider opens a console to the server's instance: it needs a live,
 * running one (a refusal is invalid_state).
 */
export function checkConsole(instance: SimulatedInstance | undefined, serverId: string): SimulatedInstance {
  const live = instance && !instance.deleted ? instance : undefined;
  if (!live) throw noInstance(serverId);
  if (live.power !== 'running') throw invalidState(`The instance of server ${serverId} is stopped; a console needs it running`);
  return live;
}

/** The console URL the simulated provider hands out: its one-time token is the last path segment's query. */
export const simulatedConsoleUrl = (instanceId: string, token: string): string => `wss://console.compute.invalid/v1/vnc/${instanceId}?token=${token}`;

/** The byte count of user_data (UTF-8), the only thing the simulator keeps of it. */
export const userDataBytes = (userData: string | null): number => (userData ? Buffer.byteLength(userData, 'utf8') : 0);
