import { Page, PageCursor } from '../../../shared/kernel/pagination/cursor';
import { Scope } from '../domain/principal';

export interface ApiKeyRecord {
  id: string;
  orgId: string;
  name: string;
  scopes: Scope[];
  createdAt: Date;
  /** The token's first 13 characters; null for keys older than this field. */
  tokenPrefix: string | null;
  createdBy: string | null;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

export interface NewApiKey {
  id: string;
  orgId: string;
  name: string;
  scopes: Scope[];
  tokenHash: Buffer;
  tokenPrefix: string;
  createdBy: string | null;
  expiresAt: Date | null;
}

export interface SessionRecord {
  id: string;
  userId: string;
  createdAt: Date;
  expiresAt: Date;
  revokedAt: Date | null;
}

/** last_used_at is written at most once per this many milliseconds per key. */
export const LAST_USED_RESOLUTION_MS = 60_000;

/** API keys and sessions, looked up by the SHA-256 of their token. */
export abstract class Credentials {
  abstract findApiKeyByHash(hash: Buffer): Promise<ApiKeyRecord | undefined>;
  abstract findSessionByHash(hash: Buffer): Promise<SessionRecord | undefined>;
  /**
   * Locks the organization (serialises key creations and member changes in it) and counts its
   * active keys: not revoked, not expired at `now`.
   */
  abstract countActiveApiKeysForUpdate(orgId: string, now: Date): Promise<number>;
  abstract createApiKey(key: NewApiKey): Promise<ApiKeyRecord>;
  /** The organization's keys, revoked and expired ones included, newest first. */
  abstract listApiKeys(orgId: string, limit: number, after: PageCursor | undefined): Promise<Page<ApiKeyRecord>>;
  /** Sets last_used_at to `at` unless it is already later than `at` minus one minute: at most one write a minute per key. */
  abstract touchApiKey(id: string, at: Date): Promise<void>;
  /** Marks the key revoked; undefined when it does not exist (in that organization, when given). */
  abstract revokeApiKey(id: string, orgId: string | undefined, at: Date): Promise<ApiKeyRecord | undefined>;
  /** The organization's active keys (not revoked, not expired at `now`) that the user created, oldest first. */
  abstract activeApiKeysCreatedBy(orgId: string, userId: string, now: Date): Promise<ApiKeyRecord[]>;
  abstract createSession(session: { id: string; userId: string; tokenHash: Buffer; expiresAt: Date }): Promise<SessionRecord>;
  abstract revokeSession(id: string, at: Date): Promise<void>;
  /** Deletes up to `limit` sessions that expired at or before `now`; how many. */
  abstract purgeExpiredSessions(now: Date, limit: number): Promise<number>;
}
