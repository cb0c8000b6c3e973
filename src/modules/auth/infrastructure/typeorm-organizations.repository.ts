import { Injectable } from '@nestjs/common';
import { Db } from '../../../shared/database/transaction';
import { Page, PageCursor, toPage } from '../../../shared/kernel/pagination/cursor';
import { OrganizationRecord } from '../application/accounts.port';
import { Invitations, NewInvitation, Organizations } from '../application/organizations.port';
import { Invitation, InvitationStatus } from '../domain/invitation';
import { Role } from '../domain/principal';

@Injectable()
export class TypeOrmOrganizations extends Organizations {
  constructor(private readonly db: Db) {
    super();
  }

  async lockUser(userId: string): Promise<void> {
    // NO KEY UPDATE: memberships and sessions referencing the user (FOR KEY SHARE) are not blocked.
    await this.db.query('SELECT id FROM users WHERE id = $1 FOR NO KEY UPDATE', [userId]);
  }

  async countMemberships(userId: string): Promise<number> {
    const row = await this.db.one<{ n: number }>('SELECT count(*)::int AS n FROM memberships WHERE user_id = $1', [userId]);
    return row?.n ?? 0;
  }

  async userEmail(userId: string): Promise<string | undefined> {
    return (await this.db.one<{ email: string }>('SELECT email FROM users WHERE id = $1', [userId]))?.email;
  }

  async rename(orgId: string, name: string): Promise<string | undefined> {
    const rows = await this.db.query<{ old_name: string }>(
      `UPDATE organizations o SET name = $2 FROM (SELECT id, name AS old_name FROM organizations WHERE id = $1 FOR UPDATE) old
        WHERE o.id = old.id RETURNING old.old_name`,
      [orgId, name],
    );
    return rows[0]?.old_name;
  }

  async openEmptyWallets(orgId: string): Promise<void> {
    await this.db.query(`INSERT INTO wallet_balances (org_id, currency, available) VALUES ($1, 'USD', 0), ($1, 'IDR', 0) ON CONFLICT DO NOTHING`, [orgId]);
  }
}

interface InvitationRow {
  id: string;
  org_id: string;
  email: string;
  role: Role;
  created_at: Date;
  created_at_text: string;
  created_by: string | null;
  expires_at: Date;
  accepted_at: Date | null;
  revoked_at: Date | null;
}

const COLUMNS = `i.id, i.org_id, i.email, i.role, i.created_at, i.created_by, i.expires_at, i.accepted_at, i.revoked_at,
  to_char(i.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at_text`;

const toInvitation = (r: InvitationRow): Invitation => ({
  id: r.id,
  orgId: r.org_id,
  email: r.email,
  role: r.role,
  createdAt: r.created_at,
  createdBy: r.created_by,
  expiresAt: r.expires_at,
  acceptedAt: r.accepted_at,
  revokedAt: r.revoked_at,
});

/** SQL of each status at $now (the parameter number given). */
const STATUS_SQL: Record<InvitationStatus, (now: string) => string> = {
  pending: (now) => `i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > ${now}`,
  accepted: () => 'i.accepted_at IS NOT NULL',
  revoked: () => 'i.revoked_at IS NOT NULL',
  expired: (now) => `i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at <= ${now}`,
};

@Injectable()
export class TypeOrmInvitations extends Invitations {
  constructor(private readonly db: Db) {
    super();
  }

  async create(inv: NewInvitation): Promise<Invitation> {
    const row = await this.db.one<InvitationRow>(
      `INSERT INTO invitations AS i (id, org_id, email, role, token_hash, created_by, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${COLUMNS}`,
      [inv.id, inv.orgId, inv.email, inv.role, inv.tokenHash, inv.createdBy, inv.createdAt, inv.expiresAt],
    );
    return toInvitation(row!);
  }

  async countPending(orgId: string, now: Date): Promise<number> {
    const row = await this.db.one<{ n: number }>(`SELECT count(*)::int AS n FROM invitations i WHERE i.org_id = $1 AND ${STATUS_SQL.pending('$2')}`, [orgId, now]);
    return row?.n ?? 0;
  }

  async list(orgId: string, status: InvitationStatus | undefined, now: Date, limit: number, after: PageCursor | undefined): Promise<Page<Invitation>> {
    const params: unknown[] = [orgId, now];
    let where = 'i.org_id = $1';
    if (status) where += ` AND ${STATUS_SQL[status]('$2')}`;
    if (after) {
      params.push(after.createdAt, after.id);
      where += ' AND (i.created_at, i.id) < ($3::timestamptz, $4)';
    }
    params.push(limit + 1);
    const rows = await this.db.query<InvitationRow>(
      `SELECT ${COLUMNS} FROM invitations i WHERE ${where} AND $2::timestamptz IS NOT NULL ORDER BY i.created_at DESC, i.id DESC LIMIT $${params.length}`,
      params,
    );
    return toPage(rows, limit, (r) => ({ createdAt: r.created_at_text, id: r.id }), toInvitation);
  }

  async findForUpdate(orgId: string, id: string): Promise<Invitation | undefined> {
    const row = await this.db.one<InvitationRow>(`SELECT ${COLUMNS} FROM invitations i WHERE i.org_id = $1 AND i.id = $2 FOR UPDATE`, [orgId, id]);
    return row && toInvitation(row);
  }

  async findByTokenForUpdate(tokenHash: Buffer): Promise<(Invitation & { organization: OrganizationRecord }) | undefined> {
    const row = await this.db.one<InvitationRow & { org_name: string; org_created_at: Date }>(
      `SELECT ${COLUMNS}, o.name AS org_name, o.created_at AS org_created_at
         FROM invitations i JOIN organizations o ON o.id = i.org_id WHERE i.token_hash = $1 FOR UPDATE OF i`,
      [tokenHash],
    );
    return row && { ...toInvitation(row), organization: { id: row.org_id, name: row.org_name, createdAt: row.org_created_at } };
  }

  async markRevoked(id: string, at: Date): Promise<Invitation> {
    const row = await this.db.one<InvitationRow>(`UPDATE invitations i SET revoked_at = COALESCE(i.revoked_at, $2) WHERE i.id = $1 RETURNING ${COLUMNS}`, [id, at]);
    return toInvitation(row!);
  }

  async markAccepted(id: string, userId: string, at: Date): Promise<void> {
    await this.db.query('UPDATE invitations SET accepted_at = $3, accepted_by = $2 WHERE id = $1 AND accepted_at IS NULL AND revoked_at IS NULL', [id, userId, at]);
  }
}
