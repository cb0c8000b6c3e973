import { Injectable } from '@nestjs/common';
import { AgentDisk } from '../../../shared/agent-protocol/agent-protocol';
import { AgentHosts } from '../../../shared/agent-protocol/agent-hosts';
import { invalidState } from '../../../shared/kernel/errors/domain-error';
import { BlockStorage, DiskPage, ProviderDisk, ProviderSnapshot, ProviderUnavailable } from '../application/block-storage.port';

const toDisk = (d: AgentDisk): ProviderDisk => ({
  diskId: d.disk_id, volumeId: d.volume_id, zoneId: d.zone_id, sizeGb: d.size_gb, serverId: d.server_id, mountPath: d.mount_path, mounted: d.mounted,
});

/**
 * The storage provider on host agents (COMPUTE_PROVIDER=agent; docs/explanation/host-agent.md):
 * a disk is a sparse file on one agent, attached through a loop device. A disk bought for a server
 * is made on that server's host; one bought alone on the host holding the fewest disks. A disk
 * attaches only to servers of its own host (another host's: invalid_state). Same error classes as
 * the compute adapter.
 */
@Injectable()
export class AgentBlockStorage extends BlockStorage {
  constructor(private readonly hosts: AgentHosts) {
    super();
  }

  private guard<T>(work: () => Promise<T>): Promise<T> {
    return this.hosts.guard(ProviderUnavailable, work);
  }

  private agentOf(volumeId: string): Promise<string> {
    return this.hosts.holder(volumeId, 'storage');
  }

  private async post(volumeId: string, action: string, body: object): Promise<ProviderDisk> {
    return this.guard(async () => toDisk((await this.hosts.call<AgentDisk>(await this.agentOf(volumeId), 'POST', `/v1/disks/${volumeId}/actions/${action}`, body))!));
  }

  async createDisk(input: { volumeId: string; step: string; zoneId: string; sizeGb: number; type: string; serverId?: string | null; fromSnapshotId?: string | null }): Promise<ProviderDisk> {
    if (input.fromSnapshotId) throw invalidState(`The host agents take no snapshots; a disk cannot be restored from ${input.fromSnapshotId}`);
    return this.guard(async () => {
      const agent = await this.hosts.place(input.volumeId, async () => (input.serverId && (await this.hosts.placementOf(input.serverId))) || this.hosts.chooseForDisk());
      const body = { step: input.step, zone_id: input.zoneId, size_gb: input.sizeGb, type: input.type };
      return toDisk((await this.hosts.call<AgentDisk>(agent, 'PUT', `/v1/disks/${input.volumeId}`, body))!);
    });
  }

  async attachDisk(input: { volumeId: string; step: string; serverId: string }): Promise<ProviderDisk> {
    return this.guard(async () => {
      const [disk, server] = [await this.agentOf(input.volumeId), await this.hosts.placementOf(input.serverId)];
      if (server !== disk) throw invalidState(`The disk of volume ${input.volumeId} is on another host than server ${input.serverId}; it cannot be attached there`);
      return this.post(input.volumeId, 'attach', { step: input.step, server_id: input.serverId });
    });
  }
  mountDisk(input: { volumeId: string; step: string; mountPath: string }): Promise<ProviderDisk> {
    return this.post(input.volumeId, 'mount', { step: input.step, mount_path: input.mountPath });
  }
  unmountDisk(input: { volumeId: string; step: string }): Promise<ProviderDisk> {
    return this.post(input.volumeId, 'unmount', { step: input.step });
  }
  detachDisk(input: { volumeId: string; step: string }): Promise<ProviderDisk> {
    return this.post(input.volumeId, 'detach', { step: input.step });
  }

  /**
   * Not supported by the host agent yet: a final refusal (the operation fails, its capacity and
   * hold given back; docs/explanation/host-agent.md "Limits").
   */
  async resizeDisk(input: { volumeId: string }): Promise<ProviderDisk> {
    throw invalidState(`The host agent does not resize disks; volume ${input.volumeId} keeps its size`);
  }

  async deleteDisk(input: { volumeId: string; step: string }): Promise<void> {
    await this.guard(async () => {
      const agent = await this.hosts.placementOf(input.volumeId);
      if (!agent) return;
      await this.hosts.call(agent, 'DELETE', `/v1/disks/${input.volumeId}?step=${encodeURIComponent(input.step)}`);
    });
  }

  async listDisks(page?: DiskPage): Promise<ProviderDisk[]> {
    return this.guard(async () => (await this.hosts.listAll<AgentDisk>('/v1/disks', 'disks', (d) => d.volume_id, page)).map(toDisk));
  }

  async getDisk(volumeId: string): Promise<ProviderDisk | null> {
    return this.guard(async () => {
      const agent = await this.hosts.placementOf(volumeId);
      if (!agent) return null;
      const d = await this.hosts.call<AgentDisk>(agent, 'GET', `/v1/disks/${volumeId}`);
      return d ? toDisk(d) : null;
    });
  }

  /** The host agents keep no snapshots: a snapshot (or a restore from one) is refused, final for its operation. */
  async createSnapshot(input: { snapshotId: string; step: string; volumeId: string }): Promise<ProviderSnapshot> {
    throw invalidState(`The host agents take no snapshots (volume ${input.volumeId})`);
  }

  async deleteSnapshot(): Promise<void> {
    // None was ever made here.
  }

  async getSnapshot(): Promise<ProviderSnapshot | null> {
    return null;
  }

  async listSnapshots(): Promise<ProviderSnapshot[]> {
    return [];
  }

  async ping(): Promise<void> {
    const up = (await this.hosts.healths()).filter((h) => h.health);
    if (up.length === 0) throw new ProviderUnavailable('no host agent answered');
  }
}
