import { Injectable } from '@nestjs/common';
import { Clock } from '../../../shared/kernel/clock/clock';
import { DomainError, forbidden } from '../../../shared/kernel/errors/domain-error';
import { Credential, Principal } from '../domain/principal';
import { hashToken, tokenKind } from '../domain/tokens';
import { Accounts } from './accounts.port';
import { CredentialCache } from './credential-cache';
import { Credentials, LAST_USED_RESOLUTION_MS } from './credentials.port';

const UNAUTHORIZED = (message: string): DomainError => new DomainError('unauthorized', message);

/** The one message for a token that is unknown, revoked or expired. */
export const INVALID_TOKEN = 'Invalid token';

/**
 * Turns a bearer token (and, for sessions, the X-Org-ID header) into a Principal, in two steps so
 * that the rate limit can run between them (decisions.md check order: 401, 429, 403):
 * `identify` (token → credential, else 401) and `principalFor` (organization, else 403).
 *
 * Tokens are looked up by their SHA-256 digest, never compared as plain text: what the database
 * compares is a digest the caller cannot steer byte by byte, so the lookup's timing tells nothing
 * about a stored token. Found records are kept for at most CREDENTIAL_CACHE_TTL_MS (1 s, the
 * revocation rule of decisions.md), so at steady state a request reads no credential; a revocation
 * through this process evicts its entry at once.
 */
@Injectable()
export class Authenticate {
  constructor(
    private readonly credentials: Credentials,
    private readonly accounts: Accounts,
    private readonly clock: Clock,
    private readonly cache: CredentialCache = new CredentialCache(),
  ) {}

  async execute(authorization: string | undefined, requestedOrgId: string | undefined): Promise<Principal> {
    return this.principalFor(await this.identify(authorization), requestedOrgId);
  }

  /** The credential of a valid token; 401 unauthorized for a missing, malformed, unknown, expired or revoked one. */
  async identify(authorization: string | undefined): Promise<Credential> {
    if (!authorization) throw UNAUTHORIZED('Missing Authorization header; send "Authorization: Bearer <token>"');
    const match = /^Bearer ([^\s]+)$/i.exec(authorization.trim());
    if (!match) throw UNAUTHORIZED('Malformed Authorization header; expected "Bearer <token>"');
    const token = match[1];
    const kind = tokenKind(token);
    if (!kind) throw UNAUTHORIZED(INVALID_TOKEN);

    // Unknown, revoked and expired tokens get the same answer: it tells a caller nothing about a token.
    if (kind === 'api_key') {
      const digest = hashToken(token);
      const key = await this.cache.get(digest, () => this.credentials.findApiKeyByHash(digest));
      if (!key || key.revokedAt) throw UNAUTHORIZED(INVALID_TOKEN);
      const now = this.clock.now();
      // An expired key is answered as any unknown token.
      if (key.expiresAt && key.expiresAt.getTime() <= now.getTime()) throw UNAUTHORIZED(INVALID_TOKEN);
      // last_used_at: read with the key, written only when a minute old (never a write per request).
      // The cached record is updated too, so requests served from the cache do not write it again.
      if (!key.lastUsedAt || now.getTime() - key.lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS) {
        key.lastUsedAt = now;
        await this.credentials.touchApiKey(key.id, now);
      }
      return { kind: 'api_key', id: key.id, orgId: key.orgId, scopes: key.scopes };
    }

    const digest = hashToken(token);
    const session = await this.cache.get(digest, () => this.credentials.findSessionByHash(digest));
    if (!session || session.revokedAt || session.expiresAt.getTime() <= this.clock.now().getTime()) throw UNAUTHORIZED(INVALID_TOKEN);
    return { kind: 'session', id: session.id, userId: session.userId };
  }

  /**
   * The organization the request acts on. An API key belongs to one organization and ignores
   * X-Org-ID. A session uses X-Org-ID when sent (403 unless the user is a member: the same answer
   * for an organization that does not exist), else the user's first organization by membership date.
   */
  async principalFor(credential: Credential, requestedOrgId: string | undefined): Promise<Principal> {
    if (credential.kind === 'api_key') {
      return { kind: 'api_key', orgId: credential.orgId, credentialId: credential.id, userId: null, role: null, scopes: credential.scopes };
    }
    if (requestedOrgId !== undefined) {
      const role = await this.accounts.membership(credential.userId, requestedOrgId);
      if (!role) throw forbidden('X-Org-ID names an organization you are not a member of');
      return { kind: 'session', orgId: requestedOrgId, credentialId: credential.id, userId: credential.userId, role, scopes: [] };
    }
    const [first] = await this.accounts.memberships(credential.userId);
    if (!first) throw forbidden('You are not a member of any organization');
    return { kind: 'session', orgId: first.organization.id, credentialId: credential.id, userId: credential.userId, role: first.role, scopes: [] };
  }
}
