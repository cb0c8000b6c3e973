import { Injectable } from '@nestjs/common';
import { Db } from '../../../shared/database/transaction';
import { AutoRenewAttempt } from '../../prepaid/domain/auto-renew';
import { AutoRenewRow as AutoRenewColumns, autoRenewColumns, toAutoRenew } from '../../prepaid/infrastructure/auto-renew-columns';
import { AutoRenewDue, AutoRenewOutcome, DueResource, NoticeDue, SuspensionState, TermKind, TermStore } from '../application/term-store.port';

/*
 * The idle checks are probes of a unique partial index per row (OFFSET 0 keeps PostgreSQL from
 * turning them into an anti-join): while a sweep writes thousands of operations a minute the
 * table's statistics lag, and the anti-join planned on them scanned every unfinished operation for
 * each due row (0.5 s a batch of 500 at the bench's size).
 */
/** Unfinished operations of a volume (the one-unfinished-operation-per-volume index serves it). */
const VOLUME_IDLE = `NOT EXISTS (SELECT 1 FROM operations o WHERE o.volume_id = v.id AND o.status IN ('pending', 'running') OFFSET 0)`;
/** Unfinished vm.* / template.* operations of a server (the one-unfinished-server-operation index serves it). */
const SERVER_IDLE = `NOT EXISTS (SELECT 1 FROM operations o WHERE o.vm_id = s.id AND o.status IN ('pending', 'running')
                                   AND (o.type LIKE 'vm.%' OR o.type LIKE 'template.%') OFFSET 0)`;

/**
 * No automatic renewal attempt due (`auto_renew_next_at` past) that the sweep will make: a
 * resource with auto-renew on is suspended only after its attempt failed (its next one then
 * later) or never came due, whatever the sweep's backlog. Unless its organization is suspended
 * (auto-renewals pause then, admin.md): the suspension goes ahead.
 */
const renewalNotDue = (a: string, now: string): string =>
  `NOT (${a}.auto_renew_next_at IS NOT NULL AND ${a}.auto_renew_next_at <= ${now}
        AND NOT EXISTS (SELECT 1 FROM organizations o WHERE o.id = ${a}.org_id AND o.suspended_at IS NOT NULL))`;

/** The table of a kind, its alias (the one the idle clauses use), its live statuses for auto-renew, its idle clause. */
const AUTO_RENEW: Record<TermKind, { table: string; a: string; live: string; idle: string }> = {
  volume: { table: 'volumes', a: 'v', live: `v.status IN ('available', 'attached', 'suspended')`, idle: VOLUME_IDLE },
  server: {
    table: 'servers',
    a: 's',
    live: `s.status IN ('running', 'stopped', 'suspended') AND s.expires_at IS NOT NULL AND s.price_usd_minor IS NOT NULL`,
    idle: SERVER_IDLE,
  },
};

interface AutoRenewRow {
  id: string;
  org_id: string;
  expires_at: Date;
  term_months: number;
  auto_renew_term_months: number | null;
  auto_renew_lead_s: number;
}

/**
 * The term sweeps' SQL. The due rows come from the partial indexes volumes_expiry_due_idx and
 * servers_expiry_due_idx (the predicate repeats theirs); FOR UPDATE SKIP LOCKED leaves rows
 * another transaction holds to it, and PostgreSQL re-checks the predicate on the latest version
 * of each row it locks (a renewal committed meanwhile moved `expires_at`: the row is not
 * returned).
 *
 * That re-check covers the row's own columns only: a renewal (or any other action) that locked
 * the row, stored its operation and committed after the claim's snapshot was taken updated no
 * column of the row, so PostgreSQL does not re-check it, and the "no unfinished operation" test
 * of the claim read the old snapshot. Each claim therefore reads its locked rows again in a second
 * statement (a fresh snapshot, the rows now held): the rows whose condition no longer holds are
 * left alone (their locks end with the transaction), and the sweep never writes an operation
 * beside a renewal that won the row first.
 */
@Injectable()
export class TypeOrmTermStore extends TermStore {
  constructor(private readonly db: Db) {
    super();
  }

  async claimExpiredVolumes(now: Date, limit: number): Promise<DueResource[]> {
    const claimed = await this.db.query<{ id: string; org_id: string; status: string; server_id: string | null }>(
      `SELECT v.id, v.org_id, v.status, v.server_id FROM volumes v
        WHERE v.status IN ('available', 'attached') AND v.expires_at <= $1 AND ${VOLUME_IDLE} AND ${renewalNotDue('v', '$1')}
        ORDER BY v.expires_at LIMIT $2 FOR UPDATE OF v SKIP LOCKED`,
      [now, limit],
      'terms_claim_expired_volumes',
    );
    const rows = await this.stillDue('volumes', claimed, `v.status IN ('available', 'attached') AND v.expires_at <= $2 AND ${VOLUME_IDLE} AND ${renewalNotDue('v', '$2')}`, now);
    return rows.map((r) => ({ id: r.id, orgId: r.org_id, status: r.status, serverId: r.server_id }));
  }

  async claimExpiredServers(now: Date, limit: number): Promise<DueResource[]> {
    const claimed = await this.db.query<{ id: string; org_id: string; status: string }>(
      `SELECT s.id, s.org_id, s.status FROM servers s
        WHERE s.status IN ('running', 'stopped') AND s.expires_at IS NOT NULL AND s.expires_at <= $1 AND ${SERVER_IDLE} AND ${renewalNotDue('s', '$1')}
        ORDER BY s.expires_at LIMIT $2 FOR UPDATE OF s SKIP LOCKED`,
      [now, limit],
      'terms_claim_expired_servers',
    );
    const rows = await this.stillDue('servers', claimed, `s.status IN ('running', 'stopped') AND s.expires_at <= $2 AND ${SERVER_IDLE} AND ${renewalNotDue('s', '$2')}`, now);
    return rows.map((r) => ({ id: r.id, orgId: r.org_id, status: r.status, serverId: null }));
  }

  async claimNoticesDue(kind: 'volume' | 'server', now: Date, offsetS: number, limit: number): Promise<NoticeDue[]> {
    const live = kind === 'volume' ? `r.status IN ('available', 'attached')` : `r.status IN ('running', 'stopped') AND r.expires_at IS NOT NULL AND r.term_months IS NOT NULL`;
    const rows = await this.db.query<{ id: string; org_id: string; name: string; expires_at: Date } & AutoRenewColumns>(
      `SELECT r.id, r.org_id, r.name, r.expires_at, ${autoRenewColumns('r')} FROM ${kind === 'volume' ? 'volumes' : 'servers'} r
        WHERE ${live} AND r.expires_at > $1 AND r.expires_at <= $1 + make_interval(secs => $2::int)
          AND (NOT r.auto_renew_enabled OR r.auto_renew_last_attempt->>'outcome' = 'insufficient_balance')
          AND make_interval(secs => $2::int) <= make_interval(months => r.term_months)
          AND NOT EXISTS (SELECT 1 FROM expiry_notices n WHERE n.resource_id = r.id AND n.expires_at = date_trunc('milliseconds', r.expires_at) AND n.offset_s = $2::int)
        ORDER BY r.expires_at LIMIT $3 FOR UPDATE OF r SKIP LOCKED`,
      [now, offsetS, limit],
      `terms_notices_due_${kind}`,
    );
    return rows.map((r) => ({ id: r.id, orgId: r.org_id, name: r.name, expiresAt: r.expires_at, autoRenew: toAutoRenew(r) }));
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
    const claimed = await this.db.query<{ id: string; org_id: string; status: string; server_id: string | null }>(
      `SELECT v.id, v.org_id, v.status, v.server_id FROM volumes v
        WHERE v.status = 'suspended' AND v.release_at <= $1 AND ${VOLUME_IDLE}
        ORDER BY v.release_at LIMIT $2 FOR UPDATE OF v SKIP LOCKED`,
      [now, limit],
      'terms_claim_releasable_volumes',
    );
    const rows = await this.stillDue('volumes', claimed, `v.status = 'suspended' AND v.release_at <= $2 AND ${VOLUME_IDLE}`, now);
    return rows.map((r) => ({ id: r.id, orgId: r.org_id, status: r.status, serverId: r.server_id }));
  }

  async claimReleasableServers(now: Date, limit: number): Promise<DueResource[]> {
    const claimed = await this.db.query<{ id: string; org_id: string; status: string }>(
      `SELECT s.id, s.org_id, s.status FROM servers s
        WHERE s.status = 'suspended' AND s.release_at <= $1 AND ${SERVER_IDLE}
        ORDER BY s.release_at LIMIT $2 FOR UPDATE OF s SKIP LOCKED`,
      [now, limit],
      'terms_claim_releasable_servers',
    );
    const rows = await this.stillDue('servers', claimed, `s.status = 'suspended' AND s.release_at <= $2 AND ${SERVER_IDLE}`, now);
    return rows.map((r) => ({ id: r.id, orgId: r.org_id, status: r.status, serverId: null }));
  }

  /**
   * The claimed (now locked) rows whose condition still holds, read again in a statement of its
   * own: its snapshot sees the operations committed since the claim began (see the class).
   */
  private async stillDue<T extends { id: string }>(table: 'volumes' | 'servers', claimed: T[], condition: string, now: Date): Promise<T[]> {
    if (claimed.length === 0) return claimed;
    const alias = table === 'volumes' ? 'v' : 's';
    // One probe of the primary key per id (LATERAL … LIMIT 1), whatever the lagging statistics say about the deadline's index.
    const due = await this.db.query<{ id: string }>(
      `SELECT x.id FROM unnest($1::text[]) AS d(id)
         CROSS JOIN LATERAL (SELECT ${alias}.id FROM ${table} ${alias} WHERE ${alias}.id = d.id AND ${condition} LIMIT 1) x`,
      [claimed.map((r) => r.id), now],
      this.db.statementName(`terms_still_due_${table}`, condition),
    );
    const ids = new Set(due.map((r) => r.id));
    return claimed.filter((r) => ids.has(r.id));
  }

  async markVolumesReleasing(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.query(`UPDATE volumes SET status = 'deleting', deleted_reason = 'expired' WHERE id = ANY($1::text[]) AND status = 'suspended'`, [ids], 'terms_volumes_releasing');
  }

  async markVolumesSuspended(volumes: readonly { id: string; previousServerId: string | null }[], suspendedAt: Date, releaseAt: Date): Promise<void> {
    if (volumes.length === 0) return;
    await this.db.query(
      `UPDATE volumes AS v SET status = 'suspended', suspended_at = $3, release_at = $4, previous_server_id = d.previous_server_id
         FROM unnest($1::text[], $2::text[]) AS d(id, previous_server_id)
        WHERE v.id = d.id AND v.deleted_at IS NULL`,
      [volumes.map((v) => v.id), volumes.map((v) => v.previousServerId), suspendedAt, releaseAt],
      'terms_volumes_suspended',
    );
  }

  async markServersSuspended(ids: readonly string[], suspendedAt: Date, releaseAt: Date): Promise<void> {
    if (ids.length === 0) return;
    await this.db.query(
      `UPDATE servers SET status = 'suspended', suspended_at = $2, release_at = $3, power_before = status WHERE id = ANY($1::text[]) AND deleted_at IS NULL`,
      [ids, suspendedAt, releaseAt],
      'terms_servers_suspended',
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

  /** One probe of the primary key per id (LATERAL, as OperationRepository.lockMany), locked in id order. */
  async lockVolumes(ids: readonly string[]): Promise<Map<string, { deleted: boolean }>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db.query<{ id: string; deleted: boolean }>(
      `SELECT v.id, v.deleted FROM unnest($1::text[]) AS r(id)
         CROSS JOIN LATERAL (SELECT id, deleted_at IS NOT NULL AS deleted FROM volumes WHERE id = r.id LIMIT 1 FOR UPDATE) v
        ORDER BY v.id`,
      [[...new Set(ids)].sort()],
      'terms_lock_volumes',
    );
    return new Map(rows.map((r) => [r.id, { deleted: r.deleted }]));
  }

  async lockServers(ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.db.query<{ id: string }>(
      `SELECT s.id FROM unnest($1::text[]) AS r(id)
         CROSS JOIN LATERAL (SELECT id FROM servers WHERE id = r.id LIMIT 1 FOR UPDATE) s
        ORDER BY s.id`,
      [[...new Set(ids)].sort()],
      'terms_lock_servers',
    );
    return new Set(rows.map((r) => r.id));
  }

  async volumesUnmounted(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.query('UPDATE volumes SET mounted = false WHERE id = ANY($1::text[])', [ids], 'terms_volumes_unmounted');
  }

  async volumesDetached(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.query('UPDATE volumes SET server_id = NULL, mount_path = NULL, mounted = false WHERE id = ANY($1::text[])', [ids], 'terms_volumes_detached');
  }

  async volumeUnmounted(id: string): Promise<void> {
    await this.db.query('UPDATE volumes SET mounted = false WHERE id = $1', [id]);
  }

  async volumeDetached(id: string): Promise<void> {
    await this.db.query('UPDATE volumes SET server_id = NULL, mount_path = NULL, mounted = false WHERE id = $1', [id]);
  }

  /**
   * The due rows come from the partial index <table>_auto_renew_due_idx on auto_renew_next_at
   * (set only while enabled and live); the unique key of accepted attempts answers the NOT EXISTS.
   */
  async claimAutoRenewDue(kind: TermKind, now: Date, limit: number): Promise<AutoRenewDue[]> {
    const { table, a, live, idle } = AUTO_RENEW[kind];
    return this.claimAutoRenew(
      `SELECT ${a}.id, ${a}.org_id, ${a}.expires_at, ${a}.term_months, ${a}.auto_renew_term_months, ${a}.auto_renew_lead_s FROM ${table} ${a}
        WHERE ${a}.auto_renew_next_at <= $1 AND ${live} AND ${idle} AND ${this.autoRenewable(a)}
        ORDER BY ${a}.auto_renew_next_at LIMIT $2 FOR UPDATE OF ${a} SKIP LOCKED`,
      [now, limit],
      `terms_auto_renew_due_${kind}`,
    );
  }

  /**
   * The resources waiting after a failed attempt (the partial index <table>_auto_renew_waiting_idx)
   * whose wallet got a credit or an operator's credit in their currency after the attempt: one
   * probe of wallet_ledger_org_currency_seq each.
   */
  async claimAutoRenewCredited(kind: TermKind, now: Date, limit: number): Promise<AutoRenewDue[]> {
    const { table, a, live, idle } = AUTO_RENEW[kind];
    return this.claimAutoRenew(
      `SELECT ${a}.id, ${a}.org_id, ${a}.expires_at, ${a}.term_months, ${a}.auto_renew_term_months, ${a}.auto_renew_lead_s FROM ${table} ${a}
        WHERE ${a}.auto_renew_wallet_seq IS NOT NULL AND ${a}.auto_renew_next_at IS NOT NULL AND ${a}.auto_renew_next_at > $1
          AND EXISTS (SELECT 1 FROM wallet_ledger l WHERE l.org_id = ${a}.org_id AND l.currency = ${a}.billing_currency
                         AND l.seq > ${a}.auto_renew_wallet_seq AND l.kind IN ('credit', 'adjustment_credit'))
          AND ${live} AND ${idle} AND ${this.autoRenewable(a)}
        ORDER BY ${a}.auto_renew_next_at LIMIT $2 FOR UPDATE OF ${a} SKIP LOCKED`,
      [now, limit],
      `terms_auto_renew_credited_${kind}`,
    );
  }

  /** No automatic renewal accepted yet for this term end, and an organization not suspended (admin.md: auto-renewals pause). */
  private autoRenewable(a: string): string {
    return `NOT EXISTS (SELECT 1 FROM auto_renew_attempts t WHERE t.resource_id = ${a}.id AND t.expires_at = ${a}.expires_at AND t.outcome = 'accepted')
        AND NOT EXISTS (SELECT 1 FROM organizations o WHERE o.id = ${a}.org_id AND o.suspended_at IS NOT NULL)`;
  }

  private async claimAutoRenew(sql: string, params: unknown[], name: string): Promise<AutoRenewDue[]> {
    const rows = await this.db.query<AutoRenewRow>(sql, params, name);
    return rows.map((r) => ({
      id: r.id, orgId: r.org_id, expiresAt: r.expires_at, termMonths: r.term_months, autoTermMonths: r.auto_renew_term_months, leadS: r.auto_renew_lead_s,
    }));
  }

  async walletSeqs(orgIds: readonly string[]): Promise<Map<string, string>> {
    const ids = [...new Set(orgIds)];
    const rows = await this.db.query<{ org_id: string; seq: string }>(
      'SELECT org_id, last_seq::text AS seq FROM wallet_heads WHERE org_id = ANY($1::text[])',
      [ids],
      'terms_wallet_seqs',
    );
    const seqs = new Map(ids.map((id) => [id, '0']));
    for (const r of rows) seqs.set(r.org_id, r.seq);
    return seqs;
  }

  async recordAutoRenewAttempts(attempts: readonly { resourceId: string; orgId: string; expiresAt: Date; at: Date; outcome: AutoRenewAttempt['outcome']; operationId: string | null }[]): Promise<Set<string>> {
    if (attempts.length === 0) return new Set();
    const rows = await this.db.query<{ resource_id: string }>(
      `INSERT INTO auto_renew_attempts (resource_id, org_id, expires_at, at, outcome, operation_id)
       SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::timestamptz[], $5::text[], $6::text[])
       ON CONFLICT DO NOTHING RETURNING resource_id`,
      [
        attempts.map((t) => t.resourceId), attempts.map((t) => t.orgId), attempts.map((t) => t.expiresAt),
        attempts.map((t) => t.at), attempts.map((t) => t.outcome), attempts.map((t) => t.operationId),
      ],
      'terms_record_auto_renew_attempts',
    );
    return new Set(rows.map((r) => r.resource_id));
  }

  async saveAutoRenewOutcomes(kind: TermKind, outcomes: readonly { id: string; outcome: AutoRenewOutcome }[]): Promise<void> {
    if (outcomes.length === 0) return;
    await this.db.query(
      `UPDATE ${AUTO_RENEW[kind].table} t
          SET auto_renew_last_attempt = o.last_attempt::jsonb, auto_renew_retry_at = coalesce(o.retry_at, 'infinity'), auto_renew_wallet_seq = o.wallet_seq::bigint
         FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::text[]) AS o(id, last_attempt, retry_at, wallet_seq)
        WHERE t.id = o.id`,
      [
        outcomes.map((o) => o.id), outcomes.map((o) => JSON.stringify(o.outcome.lastAttempt)),
        outcomes.map((o) => o.outcome.retryAt), outcomes.map((o) => o.outcome.walletSeq),
      ],
      `terms_auto_renew_outcomes_${kind}`,
    );
  }

  async postponeAutoRenew(kind: TermKind, id: string, retryAt: Date): Promise<void> {
    await this.db.query(`UPDATE ${AUTO_RENEW[kind].table} SET auto_renew_retry_at = $2 WHERE id = $1`, [id, retryAt], `terms_auto_renew_postpone_${kind}`);
  }

  async setAutoRenewLead(kind: TermKind, id: string, leadS: number): Promise<void> {
    await this.db.query(`UPDATE ${AUTO_RENEW[kind].table} SET auto_renew_lead_s = $2 WHERE id = $1`, [id, leadS], `terms_auto_renew_lead_${kind}`);
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
