import { Injectable } from '@nestjs/common';
import { Db } from '../../../shared/database/transaction';
import { newId } from '../../../shared/kernel/ids/ids';
import { StaffAuditEntry, StaffAuditFilter, StaffAuditRow, StaffDirectory } from '../application/staff.port';
import { Staff, StaffPrincipal, StaffRole, StaffToken } from '../domain/staff';

interface StaffRow {
  id: string;
  email: string;
  name: string;
  role: StaffRole;
  created_at: Date;
  disabled_at: Date | null;
}
interface TokenRow {
  id: string;
  staff_id: string;
  token_prefix: string;
  created_at: Date;
  expires_at: Date;
  revoked_at: Date | null;
}

const toStaff = (r: StaffRow): Staff => ({ id: r.id, email: r.email, name: r.name, role: r.role, createdAt: r.created_at, disabledAt: r.disabled_at });
const toToken = (r: TokenRow): StaffToken => ({ id: r.id, staffId: r.staff_id, tokenPrefix: r.token_prefix, createdAt: r.created_at, expiresAt: r.expires_at, revokedAt: r.revoked_at });
const STAFF_COLUMNS = 'id, email, name, role, created_at, disabled_at';
const TOKEN_COLUMNS = 'id, staff_id, token_prefix, created_at, expires_at, revoked_at';

@Injectable()
export class TypeOrmStaffDirectory extends StaffDirectory {
  constructor(private readonly db: Db) {
    super();
  }

  async create(input: { email: string; name: string; role: StaffRole; createdAt: Date }): Promise<Staff> {
    const [row] = await this.db.query<StaffRow>(`INSERT INTO staff (id, email, name, role, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING ${STAFF_COLUMNS}`, [
      newId('stf'), input.email, input.name, input.role, input.createdAt,
    ]);
    return toStaff(row);
  }

  async count(): Promise<number> {
    const [row] = await this.db.query<{ n: string }>('SELECT count(*)::text AS n FROM staff');
    return Number(row.n);
  }

  async get(id: string): Promise<Staff | undefined> {
    const [row] = await this.db.query<StaffRow>(`SELECT ${STAFF_COLUMNS} FROM staff WHERE id = $1`, [id]);
    return row && toStaff(row);
  }

  async list(): Promise<Staff[]> {
    return (await this.db.query<StaffRow>(`SELECT ${STAFF_COLUMNS} FROM staff ORDER BY created_at, id`)).map(toStaff);
  }

  async setRole(id: string, role: StaffRole): Promise<Staff | undefined> {
    const [row] = await this.db.query<StaffRow>(`UPDATE staff SET role = $2 WHERE id = $1 RETURNING ${STAFF_COLUMNS}`, [id, role]);
    return row && toStaff(row);
  }

  async disable(id: string, at: Date): Promise<Staff | undefined> {
    const [row] = await this.db.query<StaffRow>(`UPDATE staff SET disabled_at = coalesce(disabled_at, $2) WHERE id = $1 RETURNING ${STAFF_COLUMNS}`, [id, at]);
    return row && toStaff(row);
  }

  async createToken(staffId: string, tokenHash: Buffer, tokenPrefix: string, expiresAt: Date, createdAt: Date): Promise<StaffToken> {
    const [row] = await this.db.query<TokenRow>(
      `INSERT INTO staff_tokens (id, staff_id, token_hash, token_prefix, expires_at, created_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${TOKEN_COLUMNS}`,
      [newId('stk'), staffId, tokenHash, tokenPrefix, expiresAt, createdAt],
    );
    return toToken(row);
  }

  async revokeToken(staffId: string, tokenId: string, at: Date): Promise<StaffToken | undefined> {
    const [row] = await this.db.query<TokenRow>(
      `UPDATE staff_tokens SET revoked_at = coalesce(revoked_at, $3) WHERE id = $2 AND staff_id = $1 RETURNING ${TOKEN_COLUMNS}`,
      [staffId, tokenId, at],
    );
    return row && toToken(row);
  }

  async listTokens(staffId: string): Promise<StaffToken[]> {
    return (await this.db.query<TokenRow>(`SELECT ${TOKEN_COLUMNS} FROM staff_tokens WHERE staff_id = $1 ORDER BY created_at DESC, id`, [staffId])).map(toToken);
  }

  async principalOf(tokenHash: Buffer, now: Date): Promise<StaffPrincipal | undefined> {
    const [row] = await this.db.query<{ token_id: string; staff_id: string; role: StaffRole }>(
      `SELECT t.id AS token_id, s.id AS staff_id, s.role
         FROM staff_tokens t JOIN staff s ON s.id = t.staff_id
        WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND t.expires_at > $2 AND s.disabled_at IS NULL`,
      [tokenHash, now],
      'staff_principal',
    );
    return row && { staffId: row.staff_id, tokenId: row.token_id, role: row.role };
  }

  async audit(r: StaffAuditRow): Promise<void> {
    await this.db.query(
      `INSERT INTO staff_audit (public_id, staff_id, role, method, route, organization_id, target_type, target_id, justification, request_id, ip, status, changes)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
      [newId('sau'), r.staffId, r.role, r.method, r.route, r.organizationId, r.targetType, r.targetId, r.justification, r.requestId, r.ip, r.status, r.changes ? JSON.stringify(r.changes) : null],
      'staff_audit_insert',
    );
  }

  async auditLog(filter: StaffAuditFilter, limit: number, beforeId?: string): Promise<{ items: StaffAuditEntry[]; next: string | null }> {
    const params: unknown[] = [];
    const where: string[] = [];
    const add = (sql: (p: string) => string, value: unknown) => {
      params.push(value);
      where.push(sql(`$${params.length}`));
    };
    if (filter.staffId !== undefined) add((p) => `staff_id = ${p}`, filter.staffId);
    if (filter.organizationId !== undefined) add((p) => `organization_id = ${p}`, filter.organizationId);
    if (filter.since !== undefined) add((p) => `created_at >= ${p}`, filter.since);
    if (filter.until !== undefined) add((p) => `created_at < ${p}`, filter.until);
    if (beforeId !== undefined) add((p) => `id < ${p}::bigint`, beforeId);
    params.push(limit + 1);
    const rows = await this.db.query<{
      id: string; public_id: string; staff_id: string; role: StaffRole; method: string; route: string; organization_id: string | null; target_type: string | null;
      target_id: string | null; justification: string | null; request_id: string | null; ip: string | null; status: number; created_at: Date; changes: Record<string, unknown> | null;
    }>(
      `SELECT id::text AS id, public_id, staff_id, role, method, route, organization_id, target_type, target_id, justification, request_id, ip, status, created_at, changes
         FROM staff_audit ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT $${params.length}`,
      params,
    );
    const page = rows.slice(0, limit);
    return {
      items: page.map((r) => ({
        id: r.public_id, staffId: r.staff_id, role: r.role, method: r.method, route: r.route, organizationId: r.organization_id, targetType: r.target_type,
        targetId: r.target_id, justification: r.justification, requestId: r.request_id, ip: r.ip, status: r.status, createdAt: r.created_at, changes: r.changes,
      })),
      next: rows.length > limit ? page[page.length - 1].id : null,
    };
  }
}
