import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { DomainError, invalidRequest, notFound } from '../../../shared/kernel/errors/domain-error';
import { newId } from '../../../shared/kernel/ids/ids';
import { ActorType, AuditTrail } from '../../audit/application/audit-trail.port';
import { Scope, isScope } from '../domain/principal';
import { API_KEY_PREFIX, hashToken, newApiKeyToken, tokenKind } from '../domain/tokens';
import { Accounts } from './accounts.port';
import { CredentialCache } from './credential-cache';
import { ApiKeyRecord, Credentials } from './credentials.port';

export const MAX_API_KEYS_PER_ORG = 20;

export interface Actor {
  type: ActorType;
  id: string | null;
  ip: string | null;
}

export const OPERATOR: Actor = { type: 'operator', id: null, ip: null };

@Injectable()
export class CreateApiKey {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly accounts: Accounts,
    private readonly credentials: Credentials,
    private readonly audit: AuditTrail,
  ) {}

  /** Creates a key; `token` may be given (seed files), else one is generated. The token is returned once. */
  async execute(input: { orgId: string; name: string; scopes: string[]; token?: string; id?: string }, actor: Actor): Promise<{ key: ApiKeyRecord; token: string }> {
    const scopes = validateScopes(input.scopes);
    if (!input.name || input.name.length > 100) throw invalidRequest('name must be 1 to 100 characters', { field: 'name' });
    if (input.token !== undefined && (!input.token.startsWith(API_KEY_PREFIX) || tokenKind(input.token) !== 'api_key')) {
      throw invalidRequest(`token must be ${API_KEY_PREFIX} followed by at least 32 letters or digits`, { field: 'token' });
    }
    const token = input.token ?? newApiKeyToken();
    return this.uow.run(async () => {
      if (!(await this.accounts.organizationExists(input.orgId))) throw notFound(`Organization ${input.orgId} not found`);
      const active = await this.credentials.countActiveApiKeysForUpdate(input.orgId);
      if (active >= MAX_API_KEYS_PER_ORG) {
        throw new DomainError('quota_exceeded', `An organization may hold at most ${MAX_API_KEYS_PER_ORG} API keys; revoke one first`, { limit: MAX_API_KEYS_PER_ORG });
      }
      const key = await this.credentials.createApiKey({
        id: input.id ?? newId('key'),
        orgId: input.orgId,
        name: input.name,
        scopes,
        tokenHash: hashToken(token),
        createdBy: actor.type === 'user' ? actor.id : null,
      });
      await this.audit.record({ orgId: input.orgId, actorType: actor.type, actorId: actor.id, action: 'api_key.create', targetId: key.id, ipAddress: actor.ip, data: { name: key.name, scopes } });
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

  async execute(input: { id: string; orgId?: string }, actor: Actor): Promise<ApiKeyRecord> {
    const revoked = await this.uow.run(async () => {
      const key = await this.credentials.revokeApiKey(input.id, input.orgId, this.clock.now());
      if (!key) throw notFound(`API key ${input.id} not found`);
      await this.audit.record({ orgId: key.orgId, actorType: actor.type, actorId: actor.id, action: 'api_key.revoke', targetId: key.id, ipAddress: actor.ip });
      return key;
    });
    // Committed: this process stops accepting the key at once (others within the cache's 1 s).
    this.cache.evict(revoked.id);
    return revoked;
  }
}

function validateScopes(scopes: string[]): Scope[] {
  if (!Array.isArray(scopes) || scopes.length === 0) throw invalidRequest('scopes must list at least one of vm:read, vm:write', { field: 'scopes' });
  const unknown = scopes.find((s) => !isScope(s));
  if (unknown !== undefined) throw invalidRequest(`scopes: unknown scope "${unknown}"; allowed: vm:read, vm:write`, { field: 'scopes' });
  return [...new Set(scopes)] as Scope[];
}
