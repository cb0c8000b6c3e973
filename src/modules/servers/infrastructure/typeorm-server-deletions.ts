import { Injectable } from '@nestjs/common';
import { Db } from '../../../shared/database/transaction';
import { AttachedDisk, DetachedDisk, ServerDeletions } from '../application/server-deletions.port';
import { ServerStatus } from '../domain/server';

@Injectable()
export class TypeOrmServerDeletions extends ServerDeletions {
  constructor(private readonly db: Db) {
    super();
  }

  async unfinishedOperation(serverId: string): Promise<string | undefined> {
    // operations_unfinished_vm_idx: every unfinished operation naming the server, volume ones included.
    const row = await this.db.one<{ id: string }>(
      `SELECT id FROM operations WHERE vm_id = $1 AND status IN ('pending', 'running') ORDER BY created_at, id LIMIT 1`,
      [serverId],
      'servers_unfinished_operation',
    );
    return row?.id;
  }

  async attachedDisks(serverId: string): Promise<AttachedDisk[]> {
    const rows = await this.db.query<{ id: string; mount_path: string | null }>(
      `SELECT id, mount_path FROM volumes WHERE server_id = $1 AND deleted_at IS NULL ORDER BY id COLLATE "C"`,
      [serverId],
      'servers_attached_disks',
    );
    return rows.map((r) => ({ volumeId: r.id, mountPath: r.mount_path }));
  }

  async lockServer(serverId: string): Promise<void> {
    await this.db.query('SELECT id FROM servers WHERE id = $1 FOR UPDATE', [serverId], 'servers_lock_for_deletion');
  }

  async lockReservedIp(serverId: string): Promise<{ id: string; ip: string } | undefined> {
    return this.db.one<{ id: string; ip: string }>(
      'SELECT id, host(ip) AS ip FROM reserved_ips WHERE server_id = $1 FOR UPDATE',
      [serverId],
      'servers_lock_reserved_ip',
    );
  }

  async markDeleting(serverId: string, reason?: 'expired'): Promise<void> {
    const { affected } = await this.db.exec(
      `UPDATE servers SET status = 'deleting', deleted_reason = $2 WHERE id = $1 AND deleted_at IS NULL`,
      [serverId, reason ?? null],
      'servers_mark_deleting',
    );
    if (affected !== 1) throw new Error(`Server ${serverId} is not live`);
  }

  async restoreStatus(serverId: string, status: ServerStatus): Promise<void> {
    await this.db.exec(`UPDATE servers SET status = $2 WHERE id = $1 AND status = 'deleting' AND deleted_at IS NULL`, [serverId, status], 'servers_restore_status');
  }

  async markDeleted(serverId: string, at: Date): Promise<boolean> {
    const { affected } = await this.db.exec(`UPDATE servers SET deleted_at = $2 WHERE id = $1 AND deleted_at IS NULL`, [serverId, at], 'servers_mark_deleted');
    return affected === 1;
  }

  async detachDisks(serverId: string, volumeIds: readonly string[]): Promise<DetachedDisk[]> {
    if (volumeIds.length === 0) return [];
    const rows = await this.db.query<{ id: string; mount_path: string | null }>(
      `WITH locked AS (
         SELECT id, mount_path FROM volumes WHERE id = ANY($2::text[]) AND server_id = $1 AND deleted_at IS NULL ORDER BY id FOR UPDATE
       ), detached AS (
         UPDATE volumes v SET server_id = NULL, mount_path = NULL, mounted = false,
                status = CASE WHEN v.status = 'attached' THEN 'available' ELSE v.status END
           FROM locked WHERE v.id = locked.id
         RETURNING v.id
       )
       SELECT locked.id, locked.mount_path FROM locked JOIN detached USING (id) ORDER BY locked.id COLLATE "C"`,
      [serverId, [...volumeIds]],
      'servers_detach_disks',
    );
    return rows.map((r) => ({ volumeId: r.id, mountPath: r.mount_path }));
  }

  async unsettledAfter(after: string, limit: number): Promise<{ serverId: string; orgId: string; operationId: string }[]> {
    const rows = await this.db.query<{ id: string; org_id: string; operation_id: string }>(
      `SELECT s.id, s.org_id, o.id AS operation_id
         FROM servers s
         JOIN LATERAL (SELECT id FROM operations WHERE vm_id = s.id AND type = 'vm.delete' ORDER BY created_at DESC, id DESC LIMIT 1) o ON true
        WHERE s.status = 'deleting' AND s.deleted_at IS NULL AND s.id > $1
          AND NOT EXISTS (SELECT 1 FROM operations u WHERE u.vm_id = s.id AND u.status IN ('pending', 'running') AND (u.type LIKE 'vm.%' OR u.type LIKE 'template.%'))
        ORDER BY s.id LIMIT $2`,
      [after, limit],
      'servers_unsettled_deleting',
    );
    return rows.map((r) => ({ serverId: r.id, orgId: r.org_id, operationId: r.operation_id }));
  }

  async setMounted(serverId: string, volumeId: string, mounted: boolean): Promise<void> {
    await this.db.exec(
      `UPDATE volumes SET mounted = $3 WHERE id = $2 AND server_id = $1 AND deleted_at IS NULL AND mounted <> $3`,
      [serverId, volumeId, mounted],
      'servers_disk_mounted',
    );
  }
}
