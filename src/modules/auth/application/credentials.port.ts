import { Scope } from '../domain/principal';

export interface ApiKeyRecord {
  id: string;
  orgId: string;
  name: string;
  scopes: Scope[];
  createdAt: Date;
  revokedAt: Date | null;
}

export interface SessionRecord {
  id: string;
  userId: string;
  createdAt: Date;
  expiresAt: Date;
  revokedAt: Date | null;
}

/** API keys and sessions, looked up by the SHA-256 of their token. */
export abstract class Credentials {
  abstract findApiKeyByHash(hash: Buffer): Promise<ApiKeyRecord | undefined>;
  abstract findSessionByHash(hash: Buffer): Promise<SessionRecord | undefined>;
  /** Locks the organization's key list and counts its active keys (serialises concurrent creations). */
  abstract countActiveApiKeysForUpdate(orgId: string): Promise<number>;
  abstract createApiKey(key: { id: string; orgId: string; name: string; scopes: Scope[]; tokenHash: Buffer; createdBy: string | null }): Promise<ApiKeyRecord>;
  /** Marks the key revoked; undefined when it does not exist (in that organization, when given). */
  abstract revokeApiKey(id: string, orgId: string | undefined, at: Date): Promise<ApiKeyRecord | undefined>;
  abstract createSession(session: { id: string; userId: string; tokenHash: Buffer; expiresAt: Date }): Promise<SessionRecord>;
  abstract revokeSession(id: string, at: Date): Promise<void>;
  /** Deletes up to `limit` sessions that expired at or before `now`; how many. */
  abstract purgeExpiredSessions(now: Date, limit: number): Promise<number>;
}
