import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable } from '@nestjs/common';
import { Settings } from '../../../shared/config/settings';
import { Db, UNIQUE_VIOLATION, sqlState } from '../../../shared/database/transaction';
import { UnitOfWork, WorkerUnitOfWork } from '../../../shared/database/unit-of-work';
import { randomBase62 } from '../../../shared/kernel/ids/ids';
import { invalidState } from '../../../shared/kernel/errors/domain-error';
import { BlockStorage, DiskPage, ProviderDisk, ProviderSnapshot, ProviderUnavailable } from '../application/block-storage.port';
import { SeededDisks } from '../application/seeded-disks.port';
import { ProviderAction, ProviderCallInput, SimulatedDisk, simulateCall } from '../domain/simulated-disk';

interface DiskRow {
  disk_id: string;
  volume_id: string;
  zone_id: string;
  size_gb: number;
  type: string;
  server_id: string | null;
  mount_path: string | null;
  mounted: boolean;
  deleted_at: Date | null;
}

interface SnapshotRow {
  snapshot_id: string;
  provider_id: string;
  volume_id: string;
  zone_id: string;
  size_gb: number;
  type: string;
  data_marker: string;
  deleted_at: Date | null;
}

const SNAPSHOT_COLUMNS = 'snapshot_id, provider_id, volume_id, zone_id, size_gb, type, data_marker, deleted_at';

const toProviderSnapshot = (r: SnapshotRow): ProviderSnapshot => ({
  providerId: r.provider_id, snapshotId: r.snapshot_id, volumeId: r.volume_id, zoneId: r.zone_id, sizeGb: r.size_gb, type: r.type, dataMarker: r.data_marker,
});

const DISK_COLUMNS = 'disk_id, volume_id, zone_id, size_gb, type, server_id, mount_path, mounted, deleted_at';

const toSimulated = (r: DiskRow): SimulatedDisk => ({
  diskId: r.disk_id,
  volumeId: r.volume_id,
  zoneId: r.zone_id,
  sizeGb: r.size_gb,
  type: r.type,
  serverId: r.server_id,
  mountPath: r.mount_path,
  mounted: r.mounted,
  deleted: r.deleted_at !== null,
});

export const toProviderDisk = (d: SimulatedDisk): ProviderDisk => ({
  diskId: d.diskId,
  volumeId: d.volumeId,
  zoneId: d.zoneId,
  sizeGb: d.sizeGb,
  serverId: d.serverId,
  mountPath: d.mountPath,
  mounted: d.mounted,
});

/**
 * The shipped storage provider: a simulation that keeps its disks in its own table
 * (provider_disks), so they survive restarts like a real provider's. Each call is idempotent by
 * (volume id, step): the first call that takes effect is recorded with its answer in
 * provider_calls, in the same short transaction (on the worker's pool) as the disk's change;
 * the same call again answers that, and two racing ones are decided by the primary key (the
 * loser's transaction rolls back and it reads the winner's answer).
 *
 * PROVIDER_LATENCY_MS delays every call; PROVIDER_DOWN fails every call (ping included) with
 * ProviderUnavailable; PROVIDER_FAULTS fails that share of calls at random with
 * ProviderUnavailable, half of them before the call takes effect and half after it (the answer
 * lost), which is what the (volume, step) idempotency is for. ping is exempt from random faults.
 */
@Injectable()
export class SimulatedBlockStorage extends BlockStorage {
  constructor(
    private readonly db: Db,
    @Inject(WorkerUnitOfWork) private readonly uow: UnitOfWork,
    private readonly settings: Settings,
  ) {
    super();
  }

  async createDisk(input: { volumeId: string; step: string; zoneId: string; sizeGb: number; type: string; fromSnapshotId?: string | null }): Promise<ProviderDisk> {
    const diskId = `disk_${randomBase62(20)}`;
    return this.disk(
      await this.call(input.step, {
        action: 'create', volumeId: input.volumeId, zoneId: input.zoneId, sizeGb: input.sizeGb, type: input.type, diskId, fromSnapshotId: input.fromSnapshotId ?? null,
      }),
    );
  }

  /**
   * Copies the volume's live disk into provider_snapshots, its data marker with it; idempotent by
   * the snapshot id (the primary key: the same call again, or a racing one, answers the copy made).
   */
  async createSnapshot(input: { snapshotId: string; step: string; volumeId: string }): Promise<ProviderSnapshot> {
    const fault = await this.before();
    const made = await this.uow.run(async () => {
      const prior = await this.snapshotRow(input.snapshotId);
      if (prior) {
        if (prior.deleted_at) throw invalidState(`Snapshot ${input.snapshotId} was deleted at the storage provider; it cannot be made again`);
        return prior;
      }
      const disk = await this.db.one<{ disk_id: string }>(
        'SELECT disk_id FROM provider_disks WHERE volume_id = $1 AND deleted_at IS NULL FOR SHARE',
        [input.volumeId],
        'provider_snapshot_disk',
      );
      if (!disk) throw invalidState(`The storage provider has no disk for volume ${input.volumeId}`);
      await this.db.query(
        `INSERT INTO provider_snapshots (snapshot_id, provider_id, volume_id, zone_id, size_gb, type, data_marker)
         SELECT $1, $2, volume_id, zone_id, size_gb, type, COALESCE(data_marker, disk_id) FROM provider_disks WHERE disk_id = $3
         ON CONFLICT (snapshot_id) DO NOTHING`,
        [input.snapshotId, `psnap_${randomBase62(20)}`, disk.disk_id],
        'provider_snapshot_create',
      );
      return (await this.snapshotRow(input.snapshotId))!;
    });
    if (fault === 'after') throw new ProviderUnavailable('The storage provider took the call but its answer was lost (PROVIDER_FAULTS)');
    return toProviderSnapshot(made);
  }

  async deleteSnapshot(input: { snapshotId: string; step: string }): Promise<void> {
    const fault = await this.before();
    await this.uow.run(() =>
      this.db.query('UPDATE provider_snapshots SET deleted_at = COALESCE(deleted_at, now()) WHERE snapshot_id = $1', [input.snapshotId], 'provider_snapshot_delete'),
    );
    if (fault === 'after') throw new ProviderUnavailable('The storage provider took the call but its answer was lost (PROVIDER_FAULTS)');
  }

  async getSnapshot(snapshotId: string): Promise<ProviderSnapshot | null> {
    await this.before();
    const row = await this.uow.run(() => this.snapshotRow(snapshotId));
    return row && !row.deleted_at ? toProviderSnapshot(row) : null;
  }

  async listSnapshots(page?: { after?: string; limit: number }): Promise<ProviderSnapshot[]> {
    await this.before();
    // LIMIT NULL: every live snapshot, when no page is asked for.
    const rows = await this.uow.run(() =>
      this.db.query<SnapshotRow>(
        `SELECT ${SNAPSHOT_COLUMNS} FROM provider_snapshots WHERE deleted_at IS NULL AND snapshot_id > $1 ORDER BY snapshot_id LIMIT $2`,
        [page?.after ?? '', page?.limit ?? null],
      ),
    );
    return rows.map(toProviderSnapshot);
  }

  private async snapshotRow(snapshotId: string): Promise<SnapshotRow | undefined> {
    return this.db.one<SnapshotRow>(`SELECT ${SNAPSHOT_COLUMNS} FROM provider_snapshots WHERE snapshot_id = $1`, [snapshotId], 'provider_snapshot_find');
  }

  async attachDisk(input: { volumeId: string; step: string; serverId: string }): Promise<ProviderDisk> {
    return this.disk(await this.call(input.step, { action: 'attach', volumeId: input.volumeId, serverId: input.serverId }));
  }

  async mountDisk(input: { volumeId: string; step: string; mountPath: string }): Promise<ProviderDisk> {
    return this.disk(await this.call(input.step, { action: 'mount', volumeId: input.volumeId, mountPath: input.mountPath }));
  }

  async unmountDisk(input: { volumeId: string; step: string }): Promise<ProviderDisk> {
    return this.disk(await this.call(input.step, { action: 'unmount', volumeId: input.volumeId }));
  }

  async detachDisk(input: { volumeId: string; step: string }): Promise<ProviderDisk> {
    return this.disk(await this.call(input.step, { action: 'detach', volumeId: input.volumeId }));
  }

  async resizeDisk(input: { volumeId: string; step: string; sizeGb: number }): Promise<ProviderDisk> {
    return this.disk(await this.call(input.step, { action: 'resize', volumeId: input.volumeId, sizeGb: input.sizeGb }));
  }

  async deleteDisk(input: { volumeId: string; step: string }): Promise<void> {
    await this.call(input.step, { action: 'delete', volumeId: input.volumeId });
  }

  async listDisks(page?: DiskPage): Promise<ProviderDisk[]> {
    await this.before();
    // On the provider's own connections (the worker's pool), like every other call.
    // LIMIT NULL: no limit (every live disk, when no page is asked for).
    const rows = await this.uow.run(() =>
      this.db.query<DiskRow>(`SELECT ${DISK_COLUMNS} FROM provider_disks WHERE deleted_at IS NULL AND volume_id > $1 ORDER BY volume_id LIMIT $2`, [
        page?.after ?? '',
        page?.limit ?? null,
      ]),
    );
    return rows.map((r) => toProviderDisk(toSimulated(r)));
  }

  async getDisk(volumeId: string): Promise<ProviderDisk | null> {
    await this.before();
    const rows = await this.uow.run(() => this.db.query<DiskRow>(`SELECT ${DISK_COLUMNS} FROM provider_disks WHERE deleted_at IS NULL AND volume_id = $1`, [volumeId]));
    return rows.length === 0 ? null : toProviderDisk(toSimulated(rows[0]));
  }

  async ping(): Promise<void> {
    if (this.settings.providerDown) throw new ProviderUnavailable('The storage provider is down (PROVIDER_DOWN)');
  }

  private disk(answer: SimulatedDisk | undefined): ProviderDisk {
    if (!answer) throw new Error('The simulated provider answered no disk');
    return toProviderDisk(answer);
  }

  /**
   * Latency, then the outage; then whether this call is struck by a random fault (PROVIDER_FAULTS
   * of the calls), and if so whether before it takes effect or after (its answer lost), evenly.
   */
  private async before(): Promise<'none' | 'after'> {
    if (this.settings.providerLatencyMs > 0) await sleep(this.settings.providerLatencyMs);
    if (this.settings.providerDown) throw new ProviderUnavailable('The storage provider is down (PROVIDER_DOWN)');
    if (!(this.settings.providerFaults > 0 && Math.random() < this.settings.providerFaults)) return 'none';
    if (Math.random() < 0.5) throw new ProviderUnavailable('The storage provider failed the call (PROVIDER_FAULTS)');
    return 'after';
  }

  private async call(step: string, input: ProviderCallInput): Promise<SimulatedDisk | undefined> {
    const fault = await this.before();
    const answer = await this.record(step, input);
    if (fault === 'after') throw new ProviderUnavailable('The storage provider took the call but its answer was lost (PROVIDER_FAULTS)');
    return answer;
  }

  /**
   * The call's effect and its record, in one short transaction of the provider's own; or the
   * answer recorded already. Two statements: the recorded answer looked up with the disk's row
   * locked, then the disk's change and the call's record together.
   */
  private async record(step: string, input: ProviderCallInput): Promise<SimulatedDisk | undefined> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.uow.run(async () => {
          const found = await this.db.one<Partial<DiskRow> & { called: boolean; response: SimulatedDisk | null }>(
            `SELECT EXISTS (SELECT 1 FROM provider_calls WHERE volume_id = $1 AND step = $2) AS called,
                    (SELECT response FROM provider_calls WHERE volume_id = $1 AND step = $2) AS response, d.*
               FROM (SELECT 1) AS one
               LEFT JOIN LATERAL (SELECT ${DISK_COLUMNS} FROM provider_disks WHERE volume_id = $1 FOR UPDATE) d ON true`,
            [input.volumeId, step],
            'provider_calls_find_locking_disk',
          );
          if (found!.called) return found!.response ?? undefined;
          const before = found!.disk_id == null ? undefined : toSimulated(found as DiskRow);
          const after = simulateCall(before, input);
          const answer = input.action === 'delete' ? undefined : after;
          // The call's record ($1 to $4), written by the same statement as the disk's change.
          const params: unknown[] = [input.volumeId, step, input.action satisfies ProviderAction, answer ? JSON.stringify(answer) : null];
          const recordCall = 'INSERT INTO provider_calls (volume_id, step, action, response) VALUES ($1, $2, $3, $4)';
          if (after && !before) {
            // A restore: the new disk holds the snapshot's data (its marker); a snapshot gone is a final refusal.
            const from = input.action === 'create' ? (input.fromSnapshotId ?? null) : null;
            const source = from === null ? undefined : await this.db.one<{ data_marker: string }>(
              'SELECT data_marker FROM provider_snapshots WHERE snapshot_id = $1 AND deleted_at IS NULL FOR SHARE',
              [from],
            );
            if (from !== null && !source) throw invalidState(`The storage provider has no snapshot ${from} to restore from`);
            await this.db.query(
              `WITH disk AS (INSERT INTO provider_disks (disk_id, volume_id, zone_id, size_gb, type, data_marker) VALUES ($5, $1, $6, $7, $8, $9))
               ${recordCall}`,
              [...params, after.diskId, after.zoneId, after.sizeGb, after.type, source?.data_marker ?? after.diskId],
              'provider_calls_record_creating',
            );
          } else if (after && before && JSON.stringify(after) !== JSON.stringify(before)) {
            await this.db.query(
              `WITH disk AS (
                 UPDATE provider_disks SET server_id = $5, mount_path = $6, mounted = $7,
                        deleted_at = CASE WHEN $8::boolean THEN COALESCE(deleted_at, now()) ELSE NULL END, size_gb = $9
                  WHERE volume_id = $1)
               ${recordCall}`,
              [...params, after.serverId, after.mountPath, after.mounted, after.deleted, after.sizeGb],
              'provider_calls_record_changing',
            );
          } else {
            await this.db.query(recordCall, params, 'provider_calls_record');
          }
          return answer;
        });
      } catch (err) {
        // The same call (or the same volume's disk) raced with this one and won: read its answer.
        if (sqlState(err) === UNIQUE_VIOLATION && attempt < 3) continue;
        throw err;
      }
    }
  }
}

/** The simulated provider adopts the disks of seeded volumes (one statement, in the seed's transaction). */
@Injectable()
export class SimulatedSeededDisks extends SeededDisks {
  constructor(private readonly db: Db) {
    super();
  }

  async adopt(volumeIds: readonly string[]): Promise<void> {
    if (volumeIds.length === 0) return;
    await this.db.query(
      `INSERT INTO provider_disks (disk_id, volume_id, zone_id, size_gb, type, server_id, mount_path, mounted)
       SELECT 'disk_' || substr(md5(id || clock_timestamp()::text), 1, 20), id, zone_id, size_gb, type, server_id, mount_path,
              mounted AND server_id IS NOT NULL
         FROM volumes WHERE id = ANY($1::text[]) AND deleted_at IS NULL
       ON CONFLICT (volume_id) DO NOTHING`,
      [volumeIds],
    );
  }
}
