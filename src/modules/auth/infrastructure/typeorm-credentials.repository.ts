import { Injectable } from '@nestjs/common';
import { Db, UNIQUE_VIOLATION, sqlState } from '../../../shared/database/transaction';
import { conflict } from '../../../shared/kernel/errors/domain-error';
import { Scope } from '../domain/principal';
import { ApiKeyRecord, Credentials, SessionRecord } from '../application/credentials.port';

interface ApiKeyRow {
  id: string;
  org_id: string;
  name: string;
  scopes: Scope[];
  created_at: Date;
  revoked_at: Date | null;
}
interface SessionRow {
  id: string;
  user_id: string;
  created_at: Date;
  expires_at: Date;
  revoked_at: Date | null;
}

const API_KEY_COLUMNS = 'id, org_id, name, scopes, created_at, revoked_at';
const SESSION_COLUMNS = 'id, user_id, created_at, expires_at, revoked_at';

const toKey = (r: ApiKeyRow): ApiKeyRecord => ({ id: r.id, orgId: r.org_id, name: r.name, scopes: r.scopes, createdAt: r.created_at, revokedAt: r.revoked_at });
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

  async countActiveApiKeysForUpdate(orgId: string): Promise<number> {
    // The organization row is the lock that serialises key creation in one organization.
    await this.db.query('SELECT id FROM organizations WHERE id = $1 FOR UPDATE', [orgId]);
    const row = await this.db.one<{ n: string }>('SELECT count(*) AS n FROM api_keys WHERE org_id = $1 AND revoked_at IS NULL', [orgId]);
    return Number(row?.n ?? 0);
  }

  async createApiKey(key: { id: string; orgId: string; name: string; scopes: Scope[]; tokenHash: Buffer; createdBy: string | null }): Promise<ApiKeyRecord> {
    try {
      const row = await this.db.one<ApiKeyRow>(
        `INSERT INTO api_keys (id, org_id, name, scopes, token_hash, created_by)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${API_KEY_COLUMNS}`,
        [key.id, key.orgId, key.name, key.scopes, key.tokenHash, key.createdBy],
      );
      return toKey(row!);
    } catch (err) {
      if (sqlState(err) === UNIQUE_VIOLATION) throw conflict('An API key with this id or token exists already');
      throw err;
    }
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
}
