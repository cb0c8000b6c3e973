import { invalidState } from '../../../shared/kernel/errors/domain-error';
import { BlockStorage, DiskPage, ProviderDisk, ProviderSnapshot, ProviderUnavailable } from '../application/block-storage.port';
import { ProviderCallInput, SimulatedDisk, simulateCall } from '../domain/simulated-disk';

const copy = (d: SimulatedDisk): SimulatedDisk => ({ ...d });
const toProviderDisk = (d: SimulatedDisk): ProviderDisk => ({
  diskId: d.diskId, volumeId: d.volumeId, zoneId: d.zoneId, sizeGb: d.sizeGb, serverId: d.serverId, mountPath: d.mountPath, mounted: d.mounted,
});

/**
 * The simulated provider's rules in memory, for unit tests: idempotent by (volume, step) like
 * the database adapter. `down` fails every call; `failNext(n)` fails the next n calls (before
 * they take effect); `loseNextAnswer()` lets the next call take effect and then fails it. `calls`
 * counts the calls that took effect, by action.
 */
export class InMemoryBlockStorage extends BlockStorage {
  readonly disks = new Map<string, SimulatedDisk>();
  readonly recorded = new Map<string, SimulatedDisk | undefined>();
  readonly effective: { volumeId: string; step: string; action: string }[] = [];
  down = false;
  private failing = 0;
  private loseAnswer = false;
  private sequence = 0;

  failNext(n: number): void {
    this.failing = n;
  }

  loseNextAnswer(): void {
    this.loseAnswer = true;
  }

  async createDisk(input: { volumeId: string; step: string; zoneId: string; sizeGb: number; type: string }): Promise<ProviderDisk> {
    return this.disk(this.call(input.step, { action: 'create', volumeId: input.volumeId, zoneId: input.zoneId, sizeGb: input.sizeGb, type: input.type, diskId: `disk_${++this.sequence}` }));
  }
  async attachDisk(input: { volumeId: string; step: string; serverId: string }): Promise<ProviderDisk> {
    return this.disk(this.call(input.step, { action: 'attach', volumeId: input.volumeId, serverId: input.serverId }));
  }
  async mountDisk(input: { volumeId: string; step: string; mountPath: string }): Promise<ProviderDisk> {
    return this.disk(this.call(input.step, { action: 'mount', volumeId: input.volumeId, mountPath: input.mountPath }));
  }
  async unmountDisk(input: { volumeId: string; step: string }): Promise<ProviderDisk> {
    return this.disk(this.call(input.step, { action: 'unmount', volumeId: input.volumeId }));
  }
  async detachDisk(input: { volumeId: string; step: string }): Promise<ProviderDisk> {
    return this.disk(this.call(input.step, { action: 'detach', volumeId: input.volumeId }));
  }
  async resizeDisk(input: { volumeId: string; step: string; sizeGb: number }): Promise<ProviderDisk> {
    return this.disk(this.call(input.step, { action: 'resize', volumeId: input.volumeId, sizeGb: input.sizeGb }));
  }
  async deleteDisk(input: { volumeId: string; step: string }): Promise<void> {
    this.call(input.step, { action: 'delete', volumeId: input.volumeId });
  }
  async listDisks(page?: DiskPage): Promise<ProviderDisk[]> {
    this.before();
    const live = [...this.disks.values()].filter((d) => !d.deleted).sort((a, b) => (a.volumeId < b.volumeId ? -1 : a.volumeId > b.volumeId ? 1 : 0));
    return live.filter((d) => d.volumeId > (page?.after ?? '')).slice(0, page?.limit).map(toProviderDisk);
  }
  async getDisk(volumeId: string): Promise<ProviderDisk | null> {
    this.before();
    const disk = this.disks.get(volumeId);
    return disk && !disk.deleted ? toProviderDisk(disk) : null;
  }
  readonly snapshots = new Map<string, ProviderSnapshot & { deleted: boolean }>();
  async createSnapshot(input: { snapshotId: string; step: string; volumeId: string }): Promise<ProviderSnapshot> {
    this.before();
    const prior = this.snapshots.get(input.snapshotId);
    if (prior) return { ...prior };
    const disk = this.disks.get(input.volumeId);
    if (!disk || disk.deleted) throw invalidState(`The storage provider has no disk for volume ${input.volumeId}`);
    const made = { providerId: `snap_${++this.sequence}`, snapshotId: input.snapshotId, volumeId: disk.volumeId, zoneId: disk.zoneId, sizeGb: disk.sizeGb, type: disk.type, dataMarker: disk.diskId, deleted: false };
    this.snapshots.set(input.snapshotId, made);
    return { ...made };
  }
  async deleteSnapshot(input: { snapshotId: string; step: string }): Promise<void> {
    this.before();
    const s = this.snapshots.get(input.snapshotId);
    if (s) s.deleted = true;
  }
  async getSnapshot(snapshotId: string): Promise<ProviderSnapshot | null> {
    this.before();
    const s = this.snapshots.get(snapshotId);
    return s && !s.deleted ? { ...s } : null;
  }
  async listSnapshots(page?: { after?: string; limit: number }): Promise<ProviderSnapshot[]> {
    this.before();
    const live = [...this.snapshots.values()].filter((s) => !s.deleted && s.snapshotId > (page?.after ?? '')).sort((a, b) => (a.snapshotId < b.snapshotId ? -1 : 1));
    return live.slice(0, page?.limit ?? live.length).map((s) => ({ ...s }));
  }
  async ping(): Promise<void> {
    if (this.down) throw new ProviderUnavailable('down (test)');
  }

  private before(): void {
    if (this.down) throw new ProviderUnavailable('down (test)');
    if (this.failing > 0) {
      this.failing -= 1;
      throw new ProviderUnavailable('failed (test)');
    }
  }

  private disk(d: SimulatedDisk | undefined): ProviderDisk {
    if (!d) throw new Error('no disk answered');
    return toProviderDisk(d);
  }

  private call(step: string, input: ProviderCallInput): SimulatedDisk | undefined {
    this.before();
    const key = `${input.volumeId}|${step}`;
    let answer: SimulatedDisk | undefined;
    if (this.recorded.has(key)) {
      answer = this.recorded.get(key);
    } else {
      const current = this.disks.get(input.volumeId);
      const after = simulateCall(current && copy(current), input);
      if (after) this.disks.set(input.volumeId, copy(after));
      answer = input.action === 'delete' ? undefined : after && copy(after);
      this.recorded.set(key, answer);
      this.effective.push({ volumeId: input.volumeId, step, action: input.action });
    }
    if (this.loseAnswer) {
      this.loseAnswer = false;
      throw new ProviderUnavailable('answer lost (test)');
    }
    return answer;
  }
}
