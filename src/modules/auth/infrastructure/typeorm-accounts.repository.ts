import { Injectable } from '@nestjs/common';
import { Db, UNIQUE_VIOLATION, sqlState } from '../../../shared/database/transaction';
import { conflict } from '../../../shared/kernel/errors/domain-error';
import { Role } from '../domain/principal';
import { Accounts, MemberRecord, MembershipView, OrganizationRecord, UserRecord } from '../application/accounts.port';

interface UserRow {
  id: string;
  email: string;
  password_hash: string;
  created_at: Date;
}

const toUser = (r: UserRow): UserRecord => ({ id: r.id, email: r.email, passwordHash: r.password_hash, createdAt: r.created_at });

@Injectable()
export class TypeOrmAccounts extends Accounts {
  constructor(private readonly db: Db) {
    super();
  }

  async organizationExists(orgId: string): Promise<boolean> {
    return (await this.db.one('SELECT 1 FROM organizations WHERE id = $1', [orgId])) !== undefined;
  }

  async createOrganization(org: { id: string; name: string }): Promise<OrganizationRecord> {
    try {
      const row = await this.db.one<{ id: string; name: string; created_at: Date }>(
        'INSERT INTO organizations (id, name) VALUES ($1, $2) RETURNING id, name, created_at',
        [org.id, org.name],
      );
      return { id: row!.id, name: row!.name, createdAt: row!.created_at };
    } catch (err) {
      if (sqlState(err) === UNIQUE_VIOLATION) throw conflict(`Organization ${org.id} exists already`);
      throw err;
    }
  }

  async findUserByEmail(email: string): Promise<UserRecord | undefined> {
    const row = await this.db.one<UserRow>('SELECT id, email, password_hash, created_at FROM users WHERE email = $1', [email]);
    return row && toUser(row);
  }

  async createUser(user: { id: string; email: string; passwordHash: string }): Promise<UserRecord> {
    try {
      const row = await this.db.one<UserRow>(
        'INSERT INTO users (id, email, password_hash) VALUES ($1, $2, $3) RETURNING id, email, password_hash, created_at',
        [user.id, user.email, user.passwordHash],
      );
      return toUser(row!);
    } catch (err) {
      if (sqlState(err) === UNIQUE_VIOLATION) throw conflict('A user with this email exists already');
      throw err;
    }
  }

  async addMember(orgId: string, userId: string, role: Role): Promise<void> {
    try {
      await this.db.query('INSERT INTO memberships (org_id, user_id, role) VALUES ($1, $2, $3)', [orgId, userId, role]);
    } catch (err) {
      if (sqlState(err) === UNIQUE_VIOLATION) throw conflict(`User ${userId} is a member of ${orgId} already`);
      throw err;
    }
  }

  async membership(userId: string, orgId: string): Promise<Role | undefined> {
    const row = await this.db.one<{ role: Role }>('SELECT role FROM memberships WHERE user_id = $1 AND org_id = $2', [userId, orgId], 'auth_membership');
    return row?.role;
  }

  async memberships(userId: string): Promise<MembershipView[]> {
    const rows = await this.db.query<{ id: string; name: string; created_at: Date; role: Role; joined_at: Date }>(
      `SELECT o.id, o.name, o.created_at, m.role, m.created_at AS joined_at
         FROM memberships m JOIN organizations o ON o.id = m.org_id
        WHERE m.user_id = $1
        ORDER BY m.created_at, o.id`,
      [userId],
      'auth_memberships',
    );
    return rows.map((r) => ({ organization: { id: r.id, name: r.name, createdAt: r.created_at }, role: r.role, joinedAt: r.joined_at }));
  }

  async lockOrganization(orgId: string): Promise<void> {
    // NO KEY UPDATE: inserts referencing the organization (their FOR KEY SHARE checks) are not blocked.
    await this.db.query('SELECT id FROM organizations WHERE id = $1 FOR NO KEY UPDATE', [orgId]);
  }

  async members(orgId: string): Promise<MemberRecord[]> {
    const rows = await this.db.query<MemberRow>(`${MEMBER_SELECT} WHERE m.org_id = $1 ORDER BY m.created_at, m.user_id COLLATE "C"`, [orgId]);
    return rows.map(toMember);
  }

  async member(orgId: string, userId: string): Promise<MemberRecord | undefined> {
    const row = await this.db.one<MemberRow>(`${MEMBER_SELECT} WHERE m.org_id = $1 AND m.user_id = $2`, [orgId, userId]);
    return row && toMember(row);
  }

  async countOwners(orgId: string): Promise<number> {
    const row = await this.db.one<{ n: number }>("SELECT count(*)::int AS n FROM memberships WHERE org_id = $1 AND role = 'owner'", [orgId]);
    return row?.n ?? 0;
  }

  async setRole(orgId: string, userId: string, role: Role): Promise<void> {
    await this.db.query('UPDATE memberships SET role = $3 WHERE org_id = $1 AND user_id = $2', [orgId, userId, role]);
  }

  async removeMember(orgId: string, userId: string): Promise<void> {
    await this.db.query('DELETE FROM memberships WHERE org_id = $1 AND user_id = $2', [orgId, userId]);
  }
}

interface MemberRow {
  user_id: string;
  email: string;
  role: Role;
  joined_at: Date;
}
const MEMBER_SELECT = 'SELECT m.user_id, u.email, m.role, m.created_at AS joined_at FROM memberships m JOIN users u ON u.id = m.user_id';
const toMember = (r: MemberRow): MemberRecord => ({ userId: r.user_id, email: r.email, role: r.role, joinedAt: r.joined_at });
