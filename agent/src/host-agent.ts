import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, closeSync, existsSync, ftruncateSync, mkdirSync, openSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { AGENT_ID, AgentDisk, AgentFirewallRule, AgentHealth, AgentInstance } from '../../src/shared/agent-protocol/agent-protocol';
import { AgentConfig, disksDir, lxcPath } from './config';
import { AgentError, invalidRequest, invalidState, outOfStock, unavailable } from './errors';
import { renderRuleset } from './firewall';
import { Images } from './images';
import { run, succeeds } from './run';
import { CallJournal, JsonStore, KeyedMutex } from './store';
import { planUserData } from './user-data';

/** How long a guest gets to halt after an ACPI shutdown (SIGPWR to its init), as servers.md says. */
export const ACPI_GRACE_S = 120;
/** How long a boot may take before the agent says "not yet" (503: the service asks again). */
const BOOT_WAIT_MS = 90_000;

export interface InstanceRecord {
  server_id: string;
  instance_id: string;
  zone_id: string;
  vcpus: number;
  memory_gb: number;
  disk_gb: number;
  image: string;
  hostname: string;
  ipv4: string;
  mac: string;
  container: string;
  veth: string;
  state: 'creating' | 'created' | 'deleted';
  packages: string[];
  packages_done: boolean;
  firewall: AgentFirewallRule[];
  created_at: string;
  deleted_at?: string;
}

export interface DiskRecord {
  volume_id: string;
  disk_id: string;
  zone_id: string;
  size_gb: number;
  type: string;
  state: 'creating' | 'created' | 'deleted';
  server_id: string | null;
  loop: string | null;
  mount_path: string | null;
  mounted: boolean;
  formatted: boolean;
  created_at: string;
  deleted_at?: string;
}

export type PowerAction = 'await_boot' | 'power_on' | 'shutdown' | 'power_off' | 'reboot' | 'reset';
export type DiskAction = 'attach' | 'mount' | 'unmount' | 'detach';

const HOSTNAME = /^[A-Za-z0-9]([A-Za-z0-9.-]{0,61}[A-Za-z0-9])?$/;
/** Mount paths the agent writes into a container's configuration (no spaces, no "..", no control characters). */
const MOUNT_PATH = /^\/[A-Za-z0-9._@+:/-]{1,255}$/;
const SSH_KEY = /^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(256|384|521)) [A-Za-z0-9+/=]+( [^\r\n]*)?$/;

const base62 = (n: number): string => {
  const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  return [...randomBytes(n * 2)].map((b) => alphabet[b % 62]).join('').slice(0, n);
};
const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');
const shellQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
const ipToInt = (parts: number[]): number => parts.reduce((a, p) => a * 256 + p, 0);
const intToIp = (n: number): string => [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');

/**
 * One host's servers and disks (docs/explanation/host-agent.md): servers are LXC system containers
 * under the agent's own LXC path, disks are sparse files through loop devices. Every changing call
 * is idempotent by (resource, step) through the call journal; calls on one resource run one at a
 * time. What a read answers comes from the host (the container's configuration and state, the
 * disk's file and its loop device), the records adding what the host cannot tell (the zone, the ids).
 */
export class HostAgent {
  readonly instances: JsonStore<InstanceRecord>;
  readonly disks: JsonStore<DiskRecord>;
  private readonly journal: CallJournal;
  private readonly mutex = new KeyedMutex();
  private readonly consoles = new Map<string, { serverId: string; tokenHash: string; passwordHash: string; expiresAt: number }>();
  private readonly consoleSteps = new Map<string, string>();
  private readonly packageTasks = new Set<string>();

  constructor(
    readonly config: AgentConfig,
    readonly images: Images,
    private readonly log: (msg: string, extra?: object) => void,
  ) {
    this.instances = new JsonStore(join(config.stateDir, 'instances'));
    this.disks = new JsonStore(join(config.stateDir, 'disks-records'));
    this.journal = new CallJournal(join(config.stateDir, 'calls'));
    mkdirSync(lxcPath(config), { recursive: true });
    mkdirSync(disksDir(config), { recursive: true });
  }

  // ---------- start-up ----------

  /**
   * The host as the agent left it: its bridge up with the gateway address; a creation cut short
   * (record still `creating`) removed whole, so a server has one container or none; each attached
   * disk's loop device bound again (after a host reboot) and the containers' configurations
   * rewritten with it; user_data packages not yet installed on a running server installed now.
   */
  async recover(): Promise<void> {
    await this.ensureBridge();
    await this.images.refresh();
    for (const rec of this.instances.all()) {
      if (rec.state === 'creating') {
        rmSync(join(lxcPath(this.config), rec.container), { recursive: true, force: true });
        this.instances.remove(rec.server_id);
        this.log('removed a creation cut short', { server_id: rec.server_id });
      }
    }
    for (const d of this.disks.all()) {
      if (d.state === 'creating') {
        rmSync(this.diskFile(d.volume_id), { force: true });
        this.disks.remove(d.volume_id);
      } else if (d.state === 'created' && d.server_id) {
        d.loop = await this.ensureLoop(d.volume_id);
        this.disks.put(d.volume_id, d);
      }
    }
    for (const rec of this.instances.all()) {
      if (rec.state !== 'created') continue;
      this.writeContainerConfig(rec);
      if (!rec.packages_done && (await this.power(rec)) === 'running') this.installPackagesLater(rec);
    }
  }

  async ensureBridge(): Promise<void> {
    const { bridge } = this.config;
    if (!(await succeeds('ip', ['link', 'show', 'dev', bridge]))) await run('ip', ['link', 'add', bridge, 'type', 'bridge']);
    const address = `${this.gateway()}/${this.config.subnet.prefix}`;
    const shown = await run('ip', ['-4', '-o', 'addr', 'show', 'dev', bridge]);
    if (!shown.includes(` ${address} `)) await run('ip', ['addr', 'add', address, 'dev', bridge]);
    await run('ip', ['link', 'set', bridge, 'up']);
  }

  // ---------- health ----------

  health(): AgentHealth {
    const live = this.instances.all().filter((i) => i.state !== 'deleted');
    return {
      agent: this.config.name,
      images: this.images.statuses(),
      capacity: {
        vcpus: this.config.vcpus,
        memory_gb: this.config.memoryGb,
        vcpus_used: live.reduce((a, i) => a + i.vcpus, 0),
        memory_gb_used: live.reduce((a, i) => a + i.memory_gb, 0),
        instances: live.length,
        disks: this.disks.all().filter((d) => d.state === 'created').length,
      },
    };
  }

  // ---------- instances ----------

  /** A call idempotent by (resource, step): the recorded answer, else the work (recorded once it succeeded). */
  private once<T>(resource: string, step: string, action: string, work: () => Promise<T>): Promise<T> {
    if (typeof step !== 'string' || step.length === 0 || step.length > 200) throw invalidRequest('step must be a string of 1 to 200 characters');
    return this.mutex.run(resource, async () => {
      const prior = this.journal.find(resource, step);
      if (prior) {
        if (prior.action !== action) throw invalidRequest(`step ${step} was a ${prior.action} call, not ${action}`);
        return prior.answer as T;
      }
      const answer = await work();
      this.journal.record(resource, step, action, answer ?? null);
      return answer;
    });
  }

  createInstance(serverId: string, body: Record<string, unknown>): Promise<AgentInstance> {
    return this.once(serverId, String(body.step), 'create', async () => {
      const existing = this.instances.get(serverId);
      if (existing?.state === 'deleted') throw invalidState(`The instance of server ${serverId} was deleted; it cannot be created again`);
      if (existing?.state === 'created' && this.containerExists(existing)) {
        if ((await this.power(existing)) === 'stopped') await this.start(existing);
        return this.view(existing);
      }
      const input = this.creationInput(body);
      const rootfs = this.images.require(input.image);
      const rec = await this.mutex.run('host', async () => {
        const others = this.instances.all().filter((i) => i.state !== 'deleted' && i.server_id !== serverId);
        if (others.reduce((a, i) => a + i.vcpus, 0) + input.vcpus > this.config.vcpus) throw outOfStock(`This host has fewer than ${input.vcpus} vCPUs free`);
        if (others.reduce((a, i) => a + i.memory_gb, 0) + input.memoryGb > this.config.memoryGb) throw outOfStock(`This host has less than ${input.memoryGb} GB of memory free`);
        const record: InstanceRecord = {
          server_id: serverId,
          instance_id: existing?.instance_id ?? `lxc_${base62(20)}`,
          zone_id: input.zoneId,
          vcpus: input.vcpus,
          memory_gb: input.memoryGb,
          disk_gb: input.diskGb,
          image: input.image,
          hostname: input.hostname,
          ipv4: existing?.ipv4 ?? this.allocateAddress(others),
          mac: `02:cd:${[...randomBytes(4)].map((b) => b.toString(16).padStart(2, '0')).join(':')}`,
          container: this.containerName(serverId),
          veth: this.vethName(serverId),
          state: 'creating',
          packages: input.plan.packages,
          packages_done: input.plan.packages.length === 0,
          firewall: [],
          created_at: new Date().toISOString(),
        };
        this.instances.put(serverId, record);
        return record;
      });
      const dir = join(lxcPath(this.config), rec.container);
      rmSync(dir, { recursive: true, force: true });
      const delta = join(dir, 'delta0');
      mkdirSync(join(delta, 'etc/ssh'), { recursive: true });
      mkdirSync(join(delta, 'root/.ssh'), { recursive: true, mode: 0o700 });
      mkdirSync(join(delta, 'var/lib/cloud-disk'), { recursive: true, mode: 0o700 });
      writeFileSync(join(delta, 'etc/hostname'), `${rec.hostname}\n`);
      writeFileSync(join(delta, 'etc/hosts'), `127.0.0.1\tlocalhost\n127.0.1.1\t${rec.hostname}\n::1\tlocalhost ip6-localhost ip6-loopback\n`);
      writeFileSync(join(delta, 'root/.ssh/authorized_keys'), [...input.sshKeys, ...input.plan.sshAuthorizedKeys].map((k) => `${k}\n`).join(''), { mode: 0o600 });
      chmodSync(join(delta, 'root/.ssh'), 0o700);
      await run('ssh-keygen', ['-A', '-f', delta]);
      if (input.plan.script) {
        writeFileSync(join(delta, 'var/lib/cloud-disk/user-data'), input.plan.script, { mode: 0o700 });
        if (rec.packages_done) writeFileSync(join(delta, 'var/lib/cloud-disk/user-data.ready'), '');
      }
      this.writeContainerConfig(rec, rootfs);
      rec.state = 'created';
      this.instances.put(serverId, rec);
      this.log('instance created', { server_id: serverId, container: rec.container, ipv4: rec.ipv4 });
      await this.start(rec);
      return this.view(rec);
    });
  }

  private creationInput(body: Record<string, unknown>) {
    const num = (name: string, max: number): number => {
      const v = body[name];
      if (!Number.isSafeInteger(v) || (v as number) < 1 || (v as number) > max) throw invalidRequest(`${name} must be a whole number from 1 to ${max}`);
      return v as number;
    };
    const vcpus = num('vcpus', 512);
    const memoryGb = num('memory_gb', 4096);
    const diskGb = num('disk_gb', 65536);
    if (typeof body.zone_id !== 'string' || !AGENT_ID.test(body.zone_id)) throw invalidRequest('zone_id must be a zone id');
    if (typeof body.image !== 'string' || !AGENT_ID.test(body.image.replace(/\./g, '_'))) throw invalidRequest('image must be an image id');
    if (!this.images.buildable(body.image)) throw outOfStock(`Image ${body.image} is not available on this host (the agent builds Debian images only)`);
    if (typeof body.hostname !== 'string' || !HOSTNAME.test(body.hostname)) throw invalidRequest('hostname must be 1 to 63 letters, digits, dots and hyphens');
    const keys = body.ssh_public_keys;
    if (!Array.isArray(keys) || keys.length > 10 || !keys.every((k) => typeof k === 'string' && SSH_KEY.test(k))) throw invalidRequest('ssh_public_keys must be at most 10 OpenSSH public keys');
    const userData = body.user_data;
    if (userData !== null && userData !== undefined && (typeof userData !== 'string' || Buffer.byteLength(userData) > 32768)) throw invalidRequest('user_data must be a string of at most 32768 bytes');
    return { zoneId: body.zone_id, vcpus, memoryGb, diskGb, image: body.image, hostname: body.hostname, sshKeys: keys as string[], plan: planUserData((userData as string | null) ?? null) };
  }

  /** The first free address of the subnet after the gateway (the network and broadcast addresses excluded). */
  private allocateAddress(others: InstanceRecord[]): string {
    const taken = new Set(others.map((i) => i.ipv4));
    const size = 2 ** (32 - this.config.subnet.prefix);
    const network = ipToInt(this.config.subnet.base) - (ipToInt(this.config.subnet.base) % size);
    for (let n = network + 2; n < network + size - 1; n++) if (!taken.has(intToIp(n))) return intToIp(n);
    throw outOfStock('This host has no free address left in its subnet');
  }

  private gateway(): string {
    const size = 2 ** (32 - this.config.subnet.prefix);
    return intToIp(ipToInt(this.config.subnet.base) - (ipToInt(this.config.subnet.base) % size) + 1);
  }

  private broadcast(): string {
    const size = 2 ** (32 - this.config.subnet.prefix);
    return intToIp(ipToInt(this.config.subnet.base) - (ipToInt(this.config.subnet.base) % size) + size - 1);
  }

  containerName(serverId: string): string {
    return `${this.config.prefix}-${serverId}`;
  }

  private vethName(serverId: string): string {
    return `${this.config.prefix}v${sha256(serverId).slice(0, 14 - this.config.prefix.length)}`;
  }

  private containerDir(rec: InstanceRecord): string {
    return join(lxcPath(this.config), rec.container);
  }

  private containerExists(rec: InstanceRecord): boolean {
    return existsSync(join(this.containerDir(rec), 'config'));
  }

  /**
   * The container's LXC configuration, written whole from the record and the disks attached to
   * it: overlay root on the image, host name, the veth on the bridge with the server's address,
   * vCPUs as a CPU quota and memory as a limit (cgroup v1 and v2 keys: LXC uses the host's), no
   * CAP_NET_ADMIN (the guest cannot undo its firewall), the firewall applied in its network
   * namespace by the start-host hook before init runs, and each attached disk's device allowed and
   * (mounted) mounted at its path at every start.
   */
  writeContainerConfig(rec: InstanceRecord, rootfs = this.images.rootfs(rec.image)): void {
    const dir = this.containerDir(rec);
    mkdirSync(dir, { recursive: true });
    const attached = this.disks.all().filter((d) => d.state === 'created' && d.server_id === rec.server_id && d.loop);
    writeFileSync(join(dir, 'firewall.nft'), renderRuleset(rec.firewall));
    writeFileSync(
      join(dir, 'start-host'),
      [
        '#!/bin/sh',
        '# Written by cds-agent. LXC runs it at every start and reboot of the container, before its init:',
        '# the firewall into its network namespace (or the start fails), then its disks into its mount namespace.',
        `nsenter --net=/proc/"$LXC_PID"/ns/net nft -f ${join(dir, 'firewall.nft')} || exit 1`,
        `nsenter --mount=/proc/"$LXC_PID"/ns/mnt -- /bin/sh -c ${shellQuote(this.diskScript(attached))} || true`,
        '',
      ].join('\n'),
      { mode: 0o755 },
    );
    const lines = [
      '# Written by cds-agent; rewritten on every change.',
      'lxc.include = /usr/share/lxc/config/common.conf',
      'lxc.arch = linux64',
      `lxc.uts.name = ${rec.hostname}`,
      `lxc.rootfs.path = overlay:${rootfs}:${join(dir, 'delta0')}`,
      'lxc.apparmor.profile = unconfined',
      'lxc.autodev = 1',
      'lxc.tty.max = 1',
      'lxc.tty.dir =',
      'lxc.pty.max = 64',
      'lxc.cap.drop = net_admin',
      'lxc.signal.halt = SIGPWR',
      'lxc.net.0.type = veth',
      `lxc.net.0.link = ${this.config.bridge}`,
      `lxc.net.0.veth.pair = ${rec.veth}`,
      'lxc.net.0.flags = up',
      'lxc.net.0.name = eth0',
      `lxc.net.0.hwaddr = ${rec.mac}`,
      `lxc.net.0.ipv4.address = ${rec.ipv4}/${this.config.subnet.prefix} ${this.broadcast()}`,
      `lxc.cgroup.memory.limit_in_bytes = ${rec.memory_gb}G`,
      'lxc.cgroup.cpu.cfs_period_us = 100000',
      `lxc.cgroup.cpu.cfs_quota_us = ${rec.vcpus * 100000}`,
      `lxc.cgroup2.memory.max = ${rec.memory_gb}G`,
      `lxc.cgroup2.cpu.max = ${rec.vcpus * 100000} 100000`,
      `lxc.hook.start-host = ${join(dir, 'start-host')}`,
      `lxc.log.file = ${join(dir, 'lxc.log')}`,
      'lxc.log.level = WARN',
    ];
    writeFileSync(join(dir, 'config'), `${lines.join('\n')}\n`);
  }

  /**
   * What makes the attached disks appear inside the container (run in its mount namespace, with its
   * own binaries): each one's device node, and each mounted one mounted at its path. Run by the
   * start-host hook at every boot, and at once when a disk is attached or mounted while it runs.
   * The mounts are made from the host, so the container needs no device permission of its own.
   */
  private diskScript(attached: DiskRecord[]): string {
    const lines = ['set -e'];
    for (const d of attached) {
      const minor = d.loop!.replace('/dev/loop', '');
      lines.push(`[ -b ${d.loop} ] || mknod ${d.loop} b 7 ${minor}`);
      if (d.mounted && d.mount_path) lines.push(`mkdir -p '${d.mount_path}'`, `mountpoint -q '${d.mount_path}' || mount -t ext4 ${d.loop} '${d.mount_path}'`);
    }
    return lines.join('\n');
  }

  /** Runs a script in the running container's mount namespace (from the host: no device permission needed). */
  private async inMountNamespace(rec: InstanceRecord, script: string): Promise<void> {
    const pid = (await this.lxc('lxc-info', rec, ['-pH'])).trim();
    if (!/^\d+$/.test(pid)) throw invalidState(`The instance of server ${rec.server_id} is not running`);
    await run('nsenter', [`--mount=/proc/${pid}/ns/mnt`, '--', '/bin/sh', '-c', script]);
  }

  private async lxc(tool: string, rec: InstanceRecord, args: string[], timeoutMs = 60_000): Promise<string> {
    return run(tool, ['-P', lxcPath(this.config), '-n', rec.container, ...args], { timeoutMs });
  }

  /** The container's power as the host has it. */
  async power(rec: InstanceRecord): Promise<'running' | 'stopped'> {
    const state = await run('lxc-info', ['-P', lxcPath(this.config), '-n', rec.container, '-sH'], { allowFail: true, timeoutMs: 15_000 });
    return state.trim() === 'RUNNING' ? 'running' : 'stopped';
  }

  private async start(rec: InstanceRecord): Promise<void> {
    try {
      await this.lxc('lxc-start', rec, ['-d']);
    } catch (err) {
      if ((await this.power(rec)) === 'running') return;
      throw err;
    }
  }

  private async view(rec: InstanceRecord): Promise<AgentInstance> {
    return {
      instance_id: rec.instance_id, server_id: rec.server_id, zone_id: rec.zone_id, vcpus: rec.vcpus, memory_gb: rec.memory_gb, disk_gb: rec.disk_gb,
      image: rec.image, hostname: rec.hostname, ipv4: rec.ipv4, power: await this.power(rec),
    };
  }

  private live(serverId: string): InstanceRecord {
    const rec = this.instances.get(serverId);
    if (!rec || rec.state !== 'created' || !this.containerExists(rec)) throw invalidState(`This host has no instance for server ${serverId}`);
    return rec;
  }

  /** The live instance as the host has it, or null. */
  async getInstance(serverId: string): Promise<AgentInstance | null> {
    const rec = this.instances.get(serverId);
    if (!rec || rec.state !== 'created' || !this.containerExists(rec)) return null;
    return this.view(rec);
  }

  async listInstances(after: string, limit: number): Promise<AgentInstance[]> {
    const recs = this.instances.all().filter((r) => r.state === 'created' && r.server_id > after && this.containerExists(r));
    recs.sort((a, b) => (a.server_id < b.server_id ? -1 : a.server_id > b.server_id ? 1 : 0));
    return Promise.all(recs.slice(0, limit).map((r) => this.view(r)));
  }

  powerAction(serverId: string, action: PowerAction, step: string): Promise<AgentInstance> {
    return this.once(serverId, step, action, async () => {
      const rec = this.live(serverId);
      const power = await this.power(rec);
      switch (action) {
        case 'power_on':
          if (power === 'stopped') await this.start(rec);
          break;
        case 'await_boot':
          if (power === 'stopped') throw invalidState(`The instance of server ${serverId} is stopped; it does not boot until powered on`);
          await this.awaitBoot(rec);
          if (!rec.packages_done) this.installPackagesLater(rec);
          break;
        case 'shutdown':
          if (power === 'running') {
            // SIGPWR to the container's init; it gets the grace to halt, and is never killed here.
            await this.lxc('lxc-stop', rec, ['--nokill', '-t', String(ACPI_GRACE_S)], (ACPI_GRACE_S + 30) * 1000).catch(() => undefined);
            if ((await this.power(rec)) === 'running') {
              throw invalidState(`The guest of server ${serverId} did not halt within ${ACPI_GRACE_S} s of the ACPI shutdown; stop it with force`);
            }
          }
          break;
        case 'power_off':
          if (power === 'running') await this.lxc('lxc-stop', rec, ['-k']);
          break;
        case 'reboot':
          if (power === 'running') await this.lxc('lxc-stop', rec, ['-r', '-t', String(ACPI_GRACE_S)], (ACPI_GRACE_S + 30) * 1000);
          if ((await this.power(rec)) === 'stopped') await this.start(rec);
          break;
        case 'reset':
          if (power === 'running') await this.lxc('lxc-stop', rec, ['-k']);
          await this.start(rec);
          break;
      }
      return this.view(rec);
    });
  }

  /** Until the container's systemd says it has booted (running or degraded) and its SSH server listens. */
  private async awaitBoot(rec: InstanceRecord): Promise<void> {
    const deadline = Date.now() + BOOT_WAIT_MS;
    while (Date.now() < deadline) {
      if ((await this.power(rec)) === 'stopped') throw invalidState(`The instance of server ${rec.server_id} stopped while it booted`);
      const state = await run('lxc-attach', ['-P', lxcPath(this.config), '-n', rec.container, '--', 'systemctl', 'is-system-running'], { allowFail: true, timeoutMs: 10_000 });
      if (/^(running|degraded)/.test(state.trim())) {
        const listening = await run('lxc-attach', ['-P', lxcPath(this.config), '-n', rec.container, '--', 'ss', '-Hltn', 'sport = :22'], { allowFail: true, timeoutMs: 10_000 });
        if (listening.trim()) return;
      }
      await sleep(300);
    }
    throw unavailable(`The instance of server ${rec.server_id} has not finished booting yet`);
  }

  /**
   * A #cloud-config's packages, installed from Debian's packages by the agent: apt runs in the
   * container's file system and processes but the host's network namespace (the servers' own
   * network reaches nothing but this host), then the first-boot unit is let run. At most once
   * per server; a run cut short by a restart of the agent is started again (apt is idempotent).
   */
  private installPackagesLater(rec: InstanceRecord): void {
    if (this.packageTasks.has(rec.server_id)) return;
    this.packageTasks.add(rec.server_id);
    const attach = (cmd: string[], namespaces?: string) =>
      run('lxc-attach', ['-P', lxcPath(this.config), '-n', rec.container, ...(namespaces ? ['-s', namespaces] : []), '--', ...cmd], { timeoutMs: 15 * 60_000 });
    void (async () => {
      try {
        const hostNet = 'MOUNT|PID|UTSNAME|IPC';
        await attach(['env', 'DEBIAN_FRONTEND=noninteractive', 'apt-get', 'update', '-q'], hostNet);
        await attach(['env', 'DEBIAN_FRONTEND=noninteractive', 'apt-get', 'install', '-y', '-q', '--no-install-recommends', ...rec.packages], hostNet);
        await attach(['sh', '-c', 'touch /var/lib/cloud-disk/user-data.ready && systemctl start --no-block cloud-disk-user-data.service']);
        const now = this.instances.get(rec.server_id);
        if (now && now.state === 'created') this.instances.put(rec.server_id, { ...now, packages_done: true });
        this.log('user_data packages installed', { server_id: rec.server_id, packages: rec.packages.length });
      } catch (err) {
        this.log('user_data packages failed', { server_id: rec.server_id, reason: err instanceof Error ? err.message : String(err) });
      } finally {
        this.packageTasks.delete(rec.server_id);
      }
    })();
  }

  deleteInstance(serverId: string, step: string): Promise<null> {
    return this.once(serverId, step, 'delete', async () => {
      const rec = this.instances.get(serverId);
      if (!rec || rec.state === 'deleted') return null;
      if (this.containerExists(rec) && (await this.power(rec)) === 'running') await this.lxc('lxc-stop', rec, ['-k']);
      // Disks still attached stay (detached, with their data): the container they were in is gone.
      for (const d of this.disks.all()) {
        if (d.state === 'created' && d.server_id === serverId) await this.release(d);
      }
      rmSync(this.containerDir(rec), { recursive: true, force: true });
      this.instances.put(serverId, { ...rec, state: 'deleted', deleted_at: new Date().toISOString() });
      for (const [id, c] of this.consoles) if (c.serverId === serverId) this.consoles.delete(id);
      this.log('instance deleted', { server_id: serverId });
      return null;
    });
  }

  /** The server's rules, kept with it and applied at once when it runs (and at each start by the hook). Idempotent: the same rules again change nothing. */
  setFirewall(serverId: string, rules: AgentFirewallRule[]): Promise<{ server_id: string; rules: number }> {
    return this.mutex.run(serverId, async () => {
      const rec = this.live(serverId);
      rec.firewall = rules;
      this.instances.put(serverId, rec);
      this.writeContainerConfig(rec);
      if ((await this.power(rec)) === 'running') {
        const pid = (await this.lxc('lxc-info', rec, ['-pH'])).trim();
        await run('nsenter', [`--net=/proc/${pid}/ns/net`, 'nft', '-f', join(this.containerDir(rec), 'firewall.nft')]);
      }
      return { server_id: serverId, rules: rules.length };
    });
  }

  // ---------- consoles ----------

  createConsole(serverId: string, step: string | undefined, expiresAt: Date): Promise<{ url: string; password: string; expires_at: string }> {
    return this.mutex.run(serverId, async () => {
      const rec = this.live(serverId);
      if ((await this.power(rec)) !== 'running') throw invalidState(`The instance of server ${serverId} is stopped; a console needs it running`);
      const id = `con_${base62(20)}`;
      const token = base62(32);
      const password = base62(24);
      if (step) {
        const earlier = this.consoleSteps.get(`${serverId}\n${step}`);
        if (earlier) this.consoles.delete(earlier);
        this.consoleSteps.set(`${serverId}\n${step}`, id);
      }
      for (const [cid, c] of this.consoles) if (c.expiresAt < Date.now()) this.consoles.delete(cid);
      this.consoles.set(id, { serverId, tokenHash: sha256(token), passwordHash: sha256(password), expiresAt: expiresAt.getTime() });
      const url = `wss://${this.config.consolePublicHost}:${this.config.consolePort}/v1/consoles/${id}?token=${token}`;
      return { url, password, expires_at: expiresAt.toISOString() };
    });
  }

  /** Takes a console's one-time token (it works once): the server it opens, or why not. */
  takeConsole(id: string, token: string): { serverId: string; passwordHash: string } | string {
    const c = this.consoles.get(id);
    if (!c || c.tokenHash !== sha256(token)) return 'unknown console or token';
    this.consoles.delete(id);
    if (c.expiresAt < Date.now()) return 'the console credential has expired';
    return { serverId: c.serverId, passwordHash: c.passwordHash };
  }

  consoleCommand(serverId: string): string[] {
    const rec = this.live(serverId);
    return ['lxc-attach', '-P', lxcPath(this.config), '-n', rec.container, '--', '/bin/login', '-f', 'root'];
  }

  // ---------- disks ----------

  diskFile(volumeId: string): string {
    return join(disksDir(this.config), `${volumeId}.img`);
  }

  private diskLive(volumeId: string): DiskRecord {
    const d = this.disks.get(volumeId);
    if (!d || d.state !== 'created' || !existsSync(this.diskFile(volumeId))) throw invalidState(`This host has no disk for volume ${volumeId}`);
    return d;
  }

  /** The loop device backing the disk's file, bound now if none is. */
  private async ensureLoop(volumeId: string): Promise<string> {
    const bound = await this.loopOf(volumeId);
    if (bound) return bound;
    return (await run('losetup', ['-f', '--show', this.diskFile(volumeId)])).trim();
  }

  async loopOf(volumeId: string): Promise<string | null> {
    const out = await run('losetup', ['-j', this.diskFile(volumeId), '-O', 'NAME', '-n'], { allowFail: true });
    return out.trim().split('\n')[0]?.trim() || null;
  }

  private async diskView(d: DiskRecord): Promise<AgentDisk> {
    const attached = d.server_id !== null && (await this.loopOf(d.volume_id)) !== null ? d.server_id : null;
    return {
      disk_id: d.disk_id, volume_id: d.volume_id, zone_id: d.zone_id, size_gb: d.size_gb, server_id: attached,
      mount_path: attached ? d.mount_path : null, mounted: attached !== null && d.mounted,
    };
  }

  async getDisk(volumeId: string): Promise<AgentDisk | null> {
    const d = this.disks.get(volumeId);
    if (!d || d.state !== 'created' || !existsSync(this.diskFile(volumeId))) return null;
    return this.diskView(d);
  }

  async listDisks(after: string, limit: number): Promise<AgentDisk[]> {
    const all = this.disks.all().filter((d) => d.state === 'created' && d.volume_id > after && existsSync(this.diskFile(d.volume_id)));
    all.sort((a, b) => (a.volume_id < b.volume_id ? -1 : a.volume_id > b.volume_id ? 1 : 0));
    return Promise.all(all.slice(0, limit).map((d) => this.diskView(d)));
  }

  createDisk(volumeId: string, body: Record<string, unknown>): Promise<AgentDisk> {
    return this.once(volumeId, String(body.step), 'create', async () => {
      const existing = this.disks.get(volumeId);
      if (existing?.state === 'deleted') throw invalidState(`The disk of volume ${volumeId} was deleted; it cannot be created again`);
      if (existing?.state === 'created' && existsSync(this.diskFile(volumeId))) return this.diskView(existing);
      const size = body.size_gb;
      if (!Number.isSafeInteger(size) || (size as number) < 1 || (size as number) > 65536) throw invalidRequest('size_gb must be a whole number from 1 to 65536');
      if (typeof body.zone_id !== 'string' || !AGENT_ID.test(body.zone_id)) throw invalidRequest('zone_id must be a zone id');
      const d: DiskRecord = {
        volume_id: volumeId, disk_id: `loopdisk_${base62(20)}`, zone_id: body.zone_id, size_gb: size as number, type: String(body.type ?? 'premium'),
        state: 'creating', server_id: null, loop: null, mount_path: null, mounted: false, formatted: false, created_at: new Date().toISOString(),
      };
      this.disks.put(volumeId, d);
      // Sparse: the file takes no space until written.
      const fd = openSync(this.diskFile(volumeId), 'w', 0o600);
      try {
        ftruncateSync(fd, (size as number) * 2 ** 30);
      } finally {
        closeSync(fd);
      }
      d.state = 'created';
      this.disks.put(volumeId, d);
      this.log('disk created', { volume_id: volumeId, size_gb: size });
      return this.diskView(d);
    });
  }

  diskAction(volumeId: string, action: DiskAction, body: Record<string, unknown>): Promise<AgentDisk> {
    return this.once(volumeId, String(body.step), action, async () => {
      const d = this.diskLive(volumeId);
      switch (action) {
        case 'attach': {
          if (typeof body.server_id !== 'string') throw invalidRequest('server_id is required');
          if (d.server_id !== null && d.server_id !== body.server_id) throw invalidState(`The disk of volume ${volumeId} is attached to server ${d.server_id}`);
          const rec = this.live(body.server_id);
          d.loop = await this.ensureLoop(volumeId);
          if (!d.formatted) {
            const fs = await run('blkid', ['-o', 'value', '-s', 'TYPE', d.loop], { allowFail: true });
            if (!fs.trim()) await run('mkfs.ext4', ['-q', '-F', '-L', volumeId.slice(0, 16), d.loop], { timeoutMs: 300_000 });
            d.formatted = true;
          }
          d.server_id = rec.server_id;
          this.disks.put(volumeId, d);
          this.writeContainerConfig(rec);
          if ((await this.power(rec)) === 'running') await this.inMountNamespace(rec, this.diskScript([d]));
          break;
        }
        case 'mount': {
          if (typeof body.mount_path !== 'string' || !MOUNT_PATH.test(body.mount_path) || body.mount_path.split('/').includes('..')) {
            throw invalidState(`mount_path ${String(body.mount_path)} cannot be mounted by this host (letters, digits and . _ @ + : - only)`);
          }
          if (!d.server_id || !d.loop) throw invalidState(`The disk of volume ${volumeId} is not attached to a server`);
          const rec = this.live(d.server_id);
          d.mount_path = body.mount_path;
          d.mounted = true;
          this.disks.put(volumeId, d);
          this.writeContainerConfig(rec);
          if ((await this.power(rec)) === 'running') await this.inMountNamespace(rec, this.diskScript([d]));
          break;
        }
        case 'unmount':
          await this.unmount(d);
          break;
        case 'detach':
          if (d.mounted) throw invalidState(`The disk of volume ${volumeId} is mounted; unmount it first`);
          await this.release(d);
          break;
      }
      return this.diskView(this.diskLive(volumeId));
    });
  }

  /** Unmounts inside the running container (a busy file system fails it: never a forced unmount) and from its configuration. */
  private async unmount(d: DiskRecord): Promise<void> {
    if (d.server_id && d.mounted && d.mount_path) {
      const rec = this.instances.get(d.server_id);
      if (rec && rec.state === 'created' && this.containerExists(rec) && (await this.power(rec)) === 'running') {
        try {
          await this.inMountNamespace(rec, `if mountpoint -q '${d.mount_path}'; then umount '${d.mount_path}'; fi`);
        } catch (err) {
          throw invalidState(`The file system at ${d.mount_path} could not be unmounted (in use?): ${err instanceof Error ? err.message.slice(-200) : ''}`);
        }
      }
    }
    d.mounted = false;
    d.mount_path = null;
    this.disks.put(d.volume_id, d);
    const rec = d.server_id ? this.instances.get(d.server_id) : undefined;
    if (rec && rec.state === 'created') this.writeContainerConfig(rec);
  }

  /** Detaches: the device taken from the container, the loop device released, the configuration rewritten. */
  private async release(d: DiskRecord): Promise<void> {
    const loop = await this.loopOf(d.volume_id);
    const rec = d.server_id ? this.instances.get(d.server_id) : undefined;
    d.server_id = null;
    d.mounted = false;
    d.mount_path = null;
    d.loop = null;
    this.disks.put(d.volume_id, d);
    if (rec && rec.state === 'created' && this.containerExists(rec)) {
      this.writeContainerConfig(rec);
      if (loop && (await this.power(rec)) === 'running') {
        await this.inMountNamespace(rec, `rm -f ${loop}`).catch(() => undefined);
      }
    }
    if (loop) await run('losetup', ['-d', loop]);
  }

  deleteDisk(volumeId: string, step: string): Promise<null> {
    return this.once(volumeId, step, 'delete', async () => {
      const d = this.disks.get(volumeId);
      if (!d || d.state === 'deleted') return null;
      if (d.state === 'created') {
        if (d.mounted) await this.unmount(d);
        await this.release(d);
      }
      rmSync(this.diskFile(volumeId), { force: true });
      this.disks.put(volumeId, { ...d, state: 'deleted', server_id: null, loop: null, deleted_at: new Date().toISOString() });
      this.log('disk deleted', { volume_id: volumeId });
      return null;
    });
  }

  /** Bytes the disk's file takes on the host (sparse: what was written). */
  diskBytes(volumeId: string): number {
    try {
      return statSync(this.diskFile(volumeId)).blocks * 512;
    } catch {
      return 0;
    }
  }
}

export { AgentError };
