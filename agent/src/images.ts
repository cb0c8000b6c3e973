import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AgentConfig } from './config';
import { unavailable } from './errors';
import { run, runLogged } from './run';

/** The catalog images an agent can build: Debian releases from Debian's own packages, with debootstrap. */
const BUILDABLE: Record<string, { suite: string }> = { 'debian-12': { suite: 'bookworm' } };

/** What every image holds beyond debootstrap's minimal base: an init, the SSH server, ip. */
const INCLUDE = ['systemd-sysv', 'openssh-server', 'iproute2'];

type Status = { id: string; status: 'ready' | 'building' | 'unavailable'; reason?: string };

/**
 * The images of this host (docs/explanation/host-agent.md "Images"): built once with debootstrap
 * into AGENT_IMAGE_CACHE_DIR/images/<id>/rootfs (built in a side directory and renamed when done,
 * so a build cut short is started again, never used), read-only lower layers of the servers'
 * overlay root filesystems. Images the agent cannot build are not offered.
 */
export class Images {
  private readonly building = new Map<string, Promise<void>>();
  private readonly failures = new Map<string, string>();

  constructor(
    private readonly config: AgentConfig,
    private readonly log: (msg: string, extra?: object) => void,
  ) {}

  rootfs(id: string): string {
    return join(this.config.imageCacheDir, 'images', id, 'rootfs');
  }

  ready(id: string): boolean {
    return existsSync(join(this.config.imageCacheDir, 'images', id, 'image.json'));
  }

  statuses(): Status[] {
    return Object.keys(BUILDABLE).map((id) => {
      if (this.ready(id)) return { id, status: 'ready' as const };
      if (this.building.has(id)) return { id, status: 'building' as const };
      const reason = this.failures.get(id);
      return reason ? { id, status: 'unavailable' as const, reason } : { id, status: 'building' as const };
    });
  }

  buildable(id: string): boolean {
    return id in BUILDABLE;
  }

  /** The image's root filesystem, built first if need be; while it builds, 503 (the service retries). */
  require(id: string): string {
    if (this.ready(id)) return this.rootfs(id);
    void this.build(id);
    throw unavailable(`Image ${id} is being built on this host; try again shortly`);
  }

  /** Builds the image once (concurrent callers share the build). */
  build(id: string): Promise<void> {
    if (this.ready(id)) return Promise.resolve();
    let b = this.building.get(id);
    if (!b) {
      b = this.buildNow(id).finally(() => this.building.delete(id));
      this.building.set(id, b);
    }
    return b;
  }

  private async buildNow(id: string): Promise<void> {
    const dir = join(this.config.imageCacheDir, 'images', id);
    const side = join(dir, 'rootfs.building');
    const started = Date.now();
    this.failures.delete(id);
    try {
      mkdirSync(dir, { recursive: true });
      mkdirSync(join(this.config.imageCacheDir, 'debs'), { recursive: true });
      rmSync(side, { recursive: true, force: true });
      rmSync(this.rootfs(id), { recursive: true, force: true });
      this.log('image build started', { image: id, mirror: this.config.mirror });
      await runLogged(
        'debootstrap',
        ['--variant=minbase', `--include=${INCLUDE.join(',')}`, `--cache-dir=${join(this.config.imageCacheDir, 'debs')}`, BUILDABLE[id].suite, side, this.config.mirror],
        () => undefined,
        30 * 60_000,
      );
      await this.customize(side);
      renameSync(side, this.rootfs(id));
      const seconds = Math.round((Date.now() - started) / 100) / 10;
      writeFileSync(join(dir, 'image.json'), JSON.stringify({ id, suite: BUILDABLE[id].suite, mirror: this.config.mirror, built_at: new Date().toISOString(), build_seconds: seconds }));
      this.log('image built', { image: id, seconds });
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      this.failures.set(id, reason.slice(0, 300));
      this.log('image build failed', { image: id, reason });
    }
  }

  /**
   * What makes the debootstrapped tree a server image: no SSH host keys (each server makes its own
   * at creation), no host name, root logs in with keys only, and the first-boot unit that runs a
   * server's user_data once.
   */
  /** Brings the built images up to this agent's customization (idempotent; run at every start). */
  async refresh(): Promise<void> {
    for (const id of Object.keys(BUILDABLE)) if (this.ready(id)) await this.customize(this.rootfs(id));
  }

  private async customize(root: string): Promise<void> {
    await run('sh', ['-c', `rm -f "${root}"/etc/ssh/ssh_host_*`]);
    writeFileSync(join(root, 'etc/hostname'), '');
    writeFileSync(join(root, 'etc/ssh/sshd_config.d/cloud-disk.conf'), 'PermitRootLogin prohibit-password\nPasswordAuthentication no\n');
    mkdirSync(join(root, 'var/lib/cloud-disk'), { recursive: true, mode: 0o700 });
    writeFileSync(
      join(root, 'etc/systemd/system/cloud-disk-user-data.service'),
      [
        '[Unit]',
        'Description=Run the server\'s user_data once, at its first boot',
        'ConditionPathExists=/var/lib/cloud-disk/user-data',
        'ConditionPathExists=/var/lib/cloud-disk/user-data.ready',
        'ConditionPathExists=!/var/lib/cloud-disk/user-data.done',
        'After=network.target ssh.service',
        '',
        '[Service]',
        'Type=oneshot',
        'ExecStartPre=/usr/bin/touch /var/lib/cloud-disk/user-data.done',
        'ExecStart=/var/lib/cloud-disk/user-data',
        'StandardOutput=append:/var/log/cloud-disk-user-data.log',
        'StandardError=append:/var/log/cloud-disk-user-data.log',
        '',
        '[Install]',
        'WantedBy=multi-user.target',
        '',
      ].join('\n'),
    );
    mkdirSync(join(root, 'etc/systemd/system/multi-user.target.wants'), { recursive: true });
    await run('ln', ['-sf', '/etc/systemd/system/cloud-disk-user-data.service', join(root, 'etc/systemd/system/multi-user.target.wants/cloud-disk-user-data.service')]);
    // SIGPWR (what the agent's ACPI shutdown sends to init) powers the guest off, as LXC's Debian template does.
    await run('ln', ['-sf', '/lib/systemd/system/poweroff.target', join(root, 'etc/systemd/system/sigpwr.target')]);
    // Units that have nothing to do in a container.
    for (const unit of ['systemd-udevd.service', 'systemd-udev-trigger.service', 'getty@tty1.service']) {
      await run('ln', ['-sf', '/dev/null', join(root, 'etc/systemd/system', unit)]);
    }
  }

  /** The build time recorded with a built image, in seconds. */
  buildSeconds(id: string): number | undefined {
    try {
      return (JSON.parse(readFileSync(join(this.config.imageCacheDir, 'images', id, 'image.json'), 'utf8')) as { build_seconds: number }).build_seconds;
    } catch {
      return undefined;
    }
  }
}
