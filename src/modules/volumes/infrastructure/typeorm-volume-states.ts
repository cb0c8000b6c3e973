import { Injectable } from '@nestjs/common';
import { goneAmong } from '../../../shared/database/gone-among';
import { Db } from '../../../shared/database/transaction';
import { VolumeStateChange, VolumeStates } from '../application/volume-states.port';

@Injectable()
export class TypeOrmVolumeStates extends VolumeStates {
  constructor(private readonly db: Db) {
    super();
  }

  async apply(volumeId: string, c: VolumeStateChange): Promise<void> {
    const sets: string[] = [];
    const params: unknown[] = [volumeId];
    const set = (column: string, value: unknown): void => {
      sets.push(`${column} = $${params.push(value)}`);
    };
    if (c.status !== undefined) set('status', c.status);
    if (c.serverId !== undefined) set('server_id', c.serverId);
    if (c.mountPath !== undefined) set('mount_path', c.mountPath);
    if (c.mounted !== undefined) set('mounted', c.mounted);
    if (c.termMonths !== undefined) set('term_months', c.termMonths);
    if (c.billing !== undefined) {
      set('billing_currency', c.billing.currency);
      set('billing_amount', c.billing.minor.toString());
    }
    if (c.expiresAt !== undefined) set('expires_at', c.expiresAt);
    if (c.deletedAt !== undefined) set('deleted_at', c.deletedAt);
    if (c.diskMissingSince !== undefined) set('disk_missing_since', c.diskMissingSince);
    if (c.sizeGb !== undefined) set('size_gb', c.sizeGb);
    if (c.resizeReservedGb !== undefined) set('resize_reserved_gb', c.resizeReservedGb);
    if (sets.length === 0) return;
    const { affected } = await this.db.exec(`UPDATE volumes SET ${sets.join(', ')} WHERE id = $1`, params);
    if (affected !== 1) throw new Error(`Volume ${volumeId} does not exist`);
  }

  goneAmong(volumeIds: readonly string[]): Promise<string[]> {
    return goneAmong(this.db, 'volumes', 'o.volume_id = x.id', volumeIds);
  }

  async settledAfter(after: string, limit: number): Promise<{ id: string; orgId: string }[]> {
    const rows = await this.db.query<{ id: string; org_id: string }>(
      `SELECT v.id, v.org_id FROM volumes v
        WHERE v.deleted_at IS NULL AND v.status <> 'creating' AND v.id > $1
          AND NOT EXISTS (SELECT 1 FROM operations o WHERE o.volume_id = v.id AND o.status IN ('pending', 'running'))
        ORDER BY v.id LIMIT $2`,
      [after, limit],
    );
    return rows.map((r) => ({ id: r.id, orgId: r.org_id }));
  }

  async busy(volumeId: string): Promise<boolean> {
    const rows = await this.db.query<{ busy: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM operations o WHERE o.volume_id = $1 AND o.status IN ('pending', 'running')) AS busy`,
      [volumeId],
    );
    return rows[0]?.busy === true;
  }
}
