import { Injectable } from '@nestjs/common';
import { Db } from '../../../shared/database/transaction';
import { DueResource, NoticeDue, SuspensionState, TermStore } from '../application/term-store.port';

/** Unfinished operations of a volume (the one-unfinished-operation-per-volume index serves it). */
const VOLUME_IDLE = `NOT EXISTS (SELECT 1 FROM operations o WHERE o.volume_id = v.id AND o.status IN ('pending', 'running'))`;
/** Unfinished vm.* / template.* operations of a server (the one-unfinished-server-operation index serves it). */
const SERVER_IDLE = `NOT EXISTS (SELECT 1 FROM operations o WHERE o.vm_id = s.id AND o.status IN ('pending', 'running')
                                   AND (o.type LIKE 'vm.%' OR o.type LIKE 'template.%'))`;

/**
 * The term sweeps' SQL. The due rows come from the partial indexes volumes_expiry_due_idx and
 * servers_expiry_due_idx (the predicate repeats theirs); FOR UPDATE SKIP LOCKED leaves rows
 * another transaction holds to it, and PostgreSQL re-checks the predicate on the latest version
 * of each row it locks (a renewal committed meanwhile moved `expires_at`: the row is not
 * returned).
 */
@Injectable()
export class TypeOrmTermStore extends TermStore {
  constructor(private readonly db: Db) {
    super();
  }

  async claimExpiredVolumes(now: Date, limit: number): Promise<DueResource[]> {
    const rows = await this.db.query<{ id: string; org_id: string; status: string; server_id: string | null }>(
      `SELECT v.id, v.org_id, v.status, v.server_id FROM volumes v
        WHERE v.status IN ('available', 'attached') AND v.expires_at <= $1 AND ${VOLUME_IDLE}
        ORDER BY v.expires_at LIMIT $2 FOR UPDATE OF v SKIP LOCKED`,
      [now, limit],
      'terms_claim_expired_volumes',
    );
    return rows.map((r) => ({ id: r.id, orgId: r.org_id, status: r.status, serverId: r.server_id }));
  }

  async claimExpiredServers(now: Date, limit: number): Promise<DueResource[]> {
    const rows = await this.db.query<{ id: string; org_id: string; status: string }>(
      `SELECT s.id, s.org_id, s.status FROM servers s
        WHERE s.status IN ('running', 'stopped') AND s.expires_at IS NOT NULL AND s.expires_at <= $1 AND ${SERVER_IDLE}
        ORDER BY s.expires_at LIMIT $2 FOR UPDATE OF s SKIP LOCKED`,
      [now, limit],
      'terms_claim_expired_servers',
    );
    return rows.map((r) => ({ id: r.id, orgId: r.org_id, status: r.status, serverId: null }));
  }

  async claimNoticesDue(kind: 'volume' | 'server', now: Date, offsetS: number, limit: number): Promise<NoticeDue[]> {
    const live = kind === 'volume' ? `r.status IN ('available', 'attached')` : `r.status IN ('running', 'stopped') AND r.expires_at IS NOT NULL AND r.term_months IS NOT NULL`;
    const rows = await this.db.query<{ id: string; org_id: string; name: string; expires_at: Date }>(
      `SELECT r.id, r.org_id, r.name, r.expires_at FROM ${kind === 'volume' ? 'volumes' : 'servers'} r
        WHERE ${live} AND r.expires_at > $1 AND r.expires_at <= $1 + make_interval(secs => $2::int)
          AND make_interval(secs => $2::int) <= make_interval(months => r.term_months)
          AND NOT EXISTS (SELECT 1 FROM expiry_notices n WHERE n.resource_id = r.id AND n.expires_at = r.expires_at AND n.offset_s = $2::int)
        ORDER BY r.expires_at LIMIT $3 FOR UPDATE OF r SKIP LOCKED`,
      [now, offsetS, limit],
      `terms_notices_due_${kind}`,
    );
    return rows.map((r) => ({ id: r.id, orgId: r.org_id, name: r.name, expiresAt: r.expires_at }));
  }

  async recordNotices(notices: readonly { resourceId: string; orgId: string; expiresAt: Date; offsetS: number; sentAt: Date }[]): Promise<Set<string>> {
    if (notices.length === 0) return new Set();
    const rows = await this.db.query<{ resource_id: string }>(
      `INSERT INTO expiry_notices (resource_id, org_id, expires_at, offset_s, sent_at)
       SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::int[], $5::timestamptz[])
       ON CONFLICT DO NOTHING RETURNING resource_id`,
      [
        notices.map((n) => n.resourceId), notices.map((n) => n.orgId), notices.map((n) => n.expiresAt),
        notices.map((n) => n.offsetS), notices.map((n) => n.sentAt),
      ],
    );
    return new Set(rows.map((r) => r.resource_id));
  }

  async claimReleasableVolumes(now: Date, limit: number): Promise<DueResource[]> {
    const rows = await this.db.query<{ id: string; org_id: string; status: string; server_id: string | null }>(
      `SELECT v.id, v.org_id, v.status, v.server_id FROM volumes v
        WHERE v.status = 'suspended' AND v.release_at <= $1 AND ${VOLUME_IDLE}
        ORDER BY v.release_at LIMIT $2 FOR UPDATE OF v SKIP LOCKED`,
      [now, limit],
      'terms_claim_releasable_volumes',
    );
    return rows.map((r) => ({ id: r.id, orgId: r.org_id, status: r.status, serverId: r.server_id }));
  }

  async claimReleasableServers(now: Date, limit: number): Promise<DueResource[]> {
    const rows = await this.db.query<{ id: string; org_id: string; status: string }>(
      `SELECT s.id, s.org_id, s.status FROM servers s
        WHERE s.status = 'suspended' AND s.release_at <= $1 AND ${SERVER_IDLE}
        ORDER BY s.release_at LIMIT $2 FOR UPDATE OF s SKIP LOCKED`,
      [now, limit],
      'terms_claim_releasable_servers',
    );
    return rows.map((r) => ({ id: r.id, orgId: r.org_id, status: r.status, serverId: null }));
  }

  async markVolumeReleasing(id: string): Promise<void> {
    await this.db.query(`UPDATE volumes SET status = 'deleting', deleted_reason = 'expired' WHERE id = $1 AND status = 'suspended'`, [id], 'terms_volume_releasing');
  }

  async markVolumeSuspended(id: string, suspendedAt: Date, releaseAt: Date, previousServerId: string | null): Promise<void> {
    await this.db.query(
      `UPDATE volumes SET status = 'suspended', suspended_at = $2, release_at = $3, previous_server_id = $4 WHERE id = $1 AND deleted_at IS NULL`,
      [id, suspendedAt, releaseAt, previousServerId],
      'terms_volume_suspended',
    );
  }

  async markServerSuspended(id: string, suspendedAt: Date, releaseAt: Date): Promise<void> {
    await this.db.query(
      `UPDATE servers SET status = 'suspended', suspended_at = $2, release_at = $3, power_before = status WHERE id = $1 AND deleted_at IS NULL`,
      [id, suspendedAt, releaseAt],
      'terms_server_suspended',
    );
  }

  async lockVolume(id: string): Promise<{ status: string; serverId: string | null; deleted: boolean } | undefined> {
    const row = await this.db.one<{ status: string; server_id: string | null; deleted: boolean }>(
      'SELECT status, server_id, deleted_at IS NOT NULL AS deleted FROM volumes WHERE id = $1 FOR UPDATE',
      [id],
      'terms_lock_volume',
    );
    return row && { status: row.status, serverId: row.server_id, deleted: row.deleted };
  }

  async lockServer(id: string): Promise<{ status: string; deleted: boolean } | undefined> {
    const row = await this.db.one<{ status: string; deleted: boolean }>(
      'SELECT status, deleted_at IS NOT NULL AS deleted FROM servers WHERE id = $1 FOR UPDATE',
      [id],
      'terms_lock_server',
    );
    return row;
  }

  async volumeUnmounted(id: string): Promise<void> {
    await this.db.query('UPDATE volumes SET mounted = false WHERE id = $1', [id]);
  }

  async volumeDetached(id: string): Promise<void> {
    await this.db.query('UPDATE volumes SET server_id = NULL, mount_path = NULL, mounted = false WHERE id = $1', [id]);
  }

  async lockSuspension(kind: 'volume' | 'server', id: string): Promise<SuspensionState | undefined> {
    const row = await this.db.one<{ org_id: string; status: string; deleted: boolean; suspended_at: Date | null; release_at: Date | null }>(
      `SELECT org_id, status, deleted_at IS NOT NULL AS deleted, suspended_at, release_at FROM ${kind === 'volume' ? 'volumes' : 'servers'} WHERE id = $1 FOR UPDATE`,
      [id],
    );
    return row && { orgId: row.org_id, status: row.status, deleted: row.deleted, suspendedAt: row.suspended_at, releaseAt: row.release_at };
  }

  async setReleaseAt(kind: 'volume' | 'server', id: string, releaseAt: Date): Promise<void> {
    await this.db.query(`UPDATE ${kind === 'volume' ? 'volumes' : 'servers'} SET release_at = $2 WHERE id = $1 AND status = 'suspended'`, [id, releaseAt]);
  }
}
