import { OrganizationPolicy, limitsOf } from './organization-policy';
import { Injectable, Optional } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { DomainError, invalidRequest, notFound } from '../../../shared/kernel/errors/domain-error';
import { newId } from '../../../shared/kernel/ids/ids';
import { decodeCursor, encodeCursor, parseLimit } from '../../../shared/kernel/pagination/cursor';
import { ActorType, AuditTrail } from '../../audit/application/audit-trail.port';
import { Principal, SCOPES, Scope, isScope } from '../domain/principal';
import { API_KEY_PREFIX, hashToken, newApiKeyToken, tokenKind } from '../domain/tokens';
import { Accounts } from './accounts.port';
import { CredentialCache } from './credential-cache';
import { ApiKeyRecord, Credentials } from './credentials.port';

export const MAX_API_KEYS_PER_ORG = 20;

/** Who acts, for the audit log: a user (session) or an API key with the client's IP, or the system (operator CLI). */
export interface Actor {
  type: ActorType;
  id: string | null;
  ip: string | null;
}

/** The operator CLI and the seed: actor `system`. */
export const OPERATOR: Actor = { type: 'system', id: null, ip: null };

/** The actor of an HTTP request. */
export function actorOf(principal: Principal, ip: string | null): Actor {
  return principal.kind === 'session' ? { type: 'user', id: principal.userId, ip } : { type: 'api_key', id: principal.credentialId, ip };
}

/** The characters of a token shown for recognition: "cds_live_" and 4 more (lifecycle.md). */
export const TOKEN_PREFIX_LENGTH = 13;

@Injectable()
export class CreateApiKey {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly accounts: Accounts,
    private readonly credentials: Credentials,
    private readonly audit: AuditTrail,
    private readonly clock: Clock,
    @Optional() private readonly policy?: OrganizationPolicy,
  ) {}

  /**
   * Creates a key; `token` may be given (seed files), else one is generated. The token is
   * returned once; only its SHA-256 and its first 13 characters (for recognition) are stored.
   */
  async execute(
    input: { orgId: string; name: string; scopes: string[]; token?: string; id?: string; expiresAt?: Date | null },
    actor: Actor,
  ): Promise<{ key: ApiKeyRecord; token: string }> {
    const scopes = validateScopes(input.scopes);
    if (!input.name || input.name.length > 100) throw invalidRequest('name must be 1 to 100 characters', { field: 'name' });
    if (input.token !== undefined && (!input.token.startsWith(API_KEY_PREFIX) || tokenKind(input.token) !== 'api_key')) {
      throw invalidRequest(`token must be ${API_KEY_PREFIX} followed by at least 32 letters or digits`, { field: 'token' });
    }
    const now = this.clock.now();
    if (input.expiresAt && input.expiresAt.getTime() <= now.getTime()) {
      throw invalidRequest('expires_at must be in the future', { field: 'expires_at' });
    }
    const token = input.token ?? newApiKeyToken();
    return this.uow.run(async () => {
      if (!(await this.accounts.organizationExists(input.orgId))) throw notFound(`Organization ${input.orgId} not found`);
      const active = await this.credentials.countActiveApiKeysForUpdate(input.orgId, now);
      const limit = (await limitsOf(this.policy, input.orgId)).apiKeys;
      if (active >= limit) {
        throw new DomainError('quota_exceeded', `An organization may hold at most ${limit} active API keys; revoke one first`, { limit });
      }
      const key = await this.credentials.createApiKey({
        id: input.id ?? newId('key'),
        orgId: input.orgId,
        name: input.name,
        scopes,
        tokenHash: hashToken(token),
        tokenPrefix: token.slice(0, TOKEN_PREFIX_LENGTH),
        createdBy: actor.type === 'user' ? actor.id : null,
        expiresAt: input.expiresAt ?? null,
      });
      await this.audit.record({
        orgId: input.orgId,
        actorType: actor.type,
        actorId: actor.id,
        action: 'api_key.create',
        targetId: key.id,
        ipAddress: actor.ip,
        data: { name: key.name, scopes, expires_at: key.expiresAt?.toISOString() ?? null },
      });
      return { key, token };
    });
  }
}

@Injectable()
export class RevokeApiKey {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly credentials: Credentials,
    private readonly audit: AuditTrail,
    private readonly clock: Clock,
    private readonly cache: CredentialCache = new CredentialCache(),
  ) {}

  /** Revokes the key (in `orgId` when given); revoking a revoked key changes nothing and writes no audit row. */
  async execute(input: { id: string; orgId?: string }, actor: Actor): Promise<ApiKeyRecord> {
    const at = this.clock.now();
    const revoked = await this.uow.run(async () => {
      const key = await this.credentials.revokeApiKey(input.id, input.orgId, at);
      if (!key) throw notFound(`API key ${input.id} not found`);
      if (key.revokedAt?.getTime() === at.getTime()) {
        await this.audit.record({ orgId: key.orgId, actorType: actor.type, actorId: actor.id, action: 'api_key.revoke', targetId: key.id, ipAddress: actor.ip, data: { name: key.name } });
      }
      // Once committed (also when a caller's transaction encloses this one, as an Idempotency-Key's
      // does), this process stops accepting the key at once; others within the cache's 1 s.
      this.uow.afterCommit(() => this.cache.evict(key.id));
      return key;
    });
    return revoked;
  }
}

/** GET /v1/api-keys: the organization's keys, newest first, revoked ones included; never a token. */
@Injectable()
export class ListApiKeys {
  constructor(private readonly credentials: Credentials) {}

  async execute(principal: Principal, input: { limit?: string; cursor?: string }): Promise<{ keys: ApiKeyRecord[]; nextCursor: string | null }> {
    const limit = parseLimit(input.limit);
    const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor);
    const page = await this.credentials.listApiKeys(principal.orgId, limit, after);
    return { keys: page.items, nextCursor: page.next && encodeCursor(page.next) };
  }
}

function validateScopes(scopes: string[]): Scope[] {
  if (!Array.isArray(scopes) || scopes.length === 0) throw invalidRequest(`scopes must list at least one of ${SCOPES.join(', ')}`, { field: 'scopes' });
  const unknown = scopes.find((s) => !isScope(s));
  if (unknown !== undefined) throw invalidRequest(`scopes: unknown scope "${unknown}"; allowed: ${SCOPES.join(', ')}`, { field: 'scopes' });
  return [...new Set(scopes)] as Scope[];
}

export type { ApiKeyRecord };
