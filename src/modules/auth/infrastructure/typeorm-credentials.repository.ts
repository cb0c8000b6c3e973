import { Injectable } from '@nestjs/common';
import { Db, UNIQUE_VIOLATION, sqlState } from '../../../shared/database/transaction';
import { conflict } from '../../../shared/kernel/errors/domain-error';
import { Page, PageCursor, toPage } from '../../../shared/kernel/pagination/cursor';
import { ApiKeyRecord, Credentials, LAST_USED_RESOLUTION_MS, NewApiKey, SessionRecord } from '../application/credentials.port';
import { Scope } from '../domain/principal';

interface ApiKeyRow {
  id: string;
  org_id: string;
  name: string;
  scopes: Scope[];
  created_at: Date;
  created_at_text: string;
  token_prefix: string | null;
  created_by: string | null;
  expires_at: Date | null;
  last_used_at: Date | null;
  revoked_at: Date | null;
}
interface SessionRow {
  id: string;
  user_id: string;
  created_at: Date;
  expires_at: Date;
  revoked_at: Date | null;
}

const API_KEY_COLUMNS = `id, org_id, name, scopes, token_prefix, created_at, created_by, expires_at, last_used_at, revoked_at,
  to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at_text`;
const SESSION_COLUMNS = 'id, user_id, created_at, expires_at, revoked_at';

const toKey = (r: ApiKeyRow): ApiKeyRecord => ({
  id: r.id,
  orgId: r.org_id,
  name: r.name,
  scopes: r.scopes,
  createdAt: r.created_at,
  tokenPrefix: r.token_prefix,
  createdBy: r.created_by,
  expiresAt: r.expires_at,
  lastUsedAt: r.last_used_at,
  revokedAt: r.revoked_at,
});
const toSession = (r: SessionRow): SessionRecord => ({ id: r.id, userId: r.user_id, createdAt: r.created_at, expiresAt: r.expires_at, revokedAt: r.revoked_at });

@Injectable()
export class TypeOrmCredentials extends Credentials {
  constructor(private readonly db: Db) {
    super();
  }

  async findApiKeyByHash(hash: Buffer): Promise<ApiKeyRecord | undefined> {
    const row = await this.db.one<ApiKeyRow>(`SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE token_hash = $1`, [hash], 'auth_api_key_by_hash');
    return row && toKey(row);
  }

  async findSessionByHash(hash: Buffer): Promise<SessionRecord | undefined> {
    const row = await this.db.one<SessionRow>(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE token_hash = $1`, [hash], 'auth_session_by_hash');
    return row && toSession(row);
  }

  async countActiveApiKeysForUpdate(orgId: string, now: Date): Promise<number> {
    // The organization row is the lock that serialises key creation in one organization. NO KEY
    // UPDATE: rows referencing the organization (FOR KEY SHARE checks) are not blocked by it.
    await this.db.query('SELECT id FROM organizations WHERE id = $1 FOR NO KEY UPDATE', [orgId]);
    const row = await this.db.one<{ n: string }>(
      'SELECT count(*) AS n FROM api_keys WHERE org_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2)',
      [orgId, now],
    );
    return Number(row?.n ?? 0);
  }

  async createApiKey(key: NewApiKey): Promise<ApiKeyRecord> {
    try {
      const row = await this.db.one<ApiKeyRow>(
        `INSERT INTO api_keys (id, org_id, name, scopes, token_hash, token_prefix, created_by, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${API_KEY_COLUMNS}`,
        [key.id, key.orgId, key.name, key.scopes, key.tokenHash, key.tokenPrefix, key.createdBy, key.expiresAt],
      );
      return toKey(row!);
    } catch (err) {
      if (sqlState(err) === UNIQUE_VIOLATION) throw conflict('An API key with this id or token exists already');
      throw err;
    }
  }

  async listApiKeys(orgId: string, limit: number, after: PageCursor | undefined): Promise<Page<ApiKeyRecord>> {
    const params: unknown[] = [orgId];
    let where = 'org_id = $1';
    if (after) {
      params.push(after.createdAt, after.id);
      where += ' AND (created_at, id) < ($2::timestamptz, $3)';
    }
    params.push(limit + 1);
    const rows = await this.db.query<ApiKeyRow>(
      `SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT $${params.length}`,
      params,
    );
    return toPage(rows, limit, (r) => ({ createdAt: r.created_at_text, id: r.id }), toKey);
  }

  async touchApiKey(id: string, at: Date): Promise<void> {
    // Conditional: concurrent requests of one key in the same minute write once (the others
    // find the condition false after the first commits).
    await this.db.query(
      'UPDATE api_keys SET last_used_at = $2 WHERE id = $1 AND (last_used_at IS NULL OR last_used_at <= $3)',
      [id, at, new Date(at.getTime() - LAST_USED_RESOLUTION_MS)],
    );
  }

  async revokeApiKey(id: string, orgId: string | undefined, at: Date): Promise<ApiKeyRecord | undefined> {
    const rows = await this.db.query<ApiKeyRow>(
      `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $3)
        WHERE id = $1 AND ($2::text IS NULL OR org_id = $2)
        RETURNING ${API_KEY_COLUMNS}`,
      [id, orgId ?? null, at],
    );
    return rows[0] && toKey(rows[0]);
  }

  async activeApiKeysCreatedBy(orgId: string, userId: string, now: Date): Promise<ApiKeyRecord[]> {
    const rows = await this.db.query<ApiKeyRow>(
      `SELECT ${API_KEY_COLUMNS} FROM api_keys
        WHERE org_id = $1 AND created_by = $2 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $3)
        ORDER BY created_at, id`,
      [orgId, userId, now],
    );
    return rows.map(toKey);
  }

  async createSession(session: { id: string; userId: string; tokenHash: Buffer; expiresAt: Date }): Promise<SessionRecord> {
    const row = await this.db.one<SessionRow>(
      `INSERT INTO sessions (id, user_id, token_hash, expires_at) VALUES ($1, $2, $3, $4) RETURNING ${SESSION_COLUMNS}`,
      [session.id, session.userId, session.tokenHash, session.expiresAt],
    );
    return toSession(row!);
  }

  async revokeSession(id: string, at: Date): Promise<void> {
    await this.db.query('UPDATE sessions SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1', [id, at]);
  }

  async purgeExpiredSessions(now: Date, limit: number): Promise<number> {
    // sessions_expires_at_idx bounds the scan to the expired sessions.
    const { affected } = await this.db.exec(
      'DELETE FROM sessions WHERE id IN (SELECT id FROM sessions WHERE expires_at <= $1 LIMIT $2)',
      [now, limit],
    );
    return affected;
  }
}
