import { Injectable } from '@nestjs/common';
import { Clock } from '../../../shared/kernel/clock/clock';
import { DomainError, forbidden } from '../../../shared/kernel/errors/domain-error';
import { Principal } from '../domain/principal';
import { hashToken, tokenKind } from '../domain/tokens';
import { Accounts } from './accounts.port';
import { Credentials } from './credentials.port';

const UNAUTHORIZED = (message: string): DomainError => new DomainError('unauthorized', message);

/**
 * Turns a bearer token (and, for sessions, the X-Org-ID header) into a Principal.
 * No cache: a revocation takes effect on the next request, on every process.
 */
@Injectable()
export class Authenticate {
  constructor(
    private readonly credentials: Credentials,
    private readonly accounts: Accounts,
    private readonly clock: Clock,
  ) {}

  async execute(authorization: string | undefined, requestedOrgId: string | undefined): Promise<Principal> {
    if (!authorization) throw UNAUTHORIZED('Missing Authorization header; send "Authorization: Bearer <token>"');
    const match = /^Bearer ([^\s]+)$/i.exec(authorization.trim());
    if (!match) throw UNAUTHORIZED('Malformed Authorization header; expected "Bearer <token>"');
    const token = match[1];
    const kind = tokenKind(token);
    if (!kind) throw UNAUTHORIZED('Invalid token');
    const now = this.clock.now();

    if (kind === 'api_key') {
      const key = await this.credentials.findApiKeyByHash(hashToken(token));
      if (!key) throw UNAUTHORIZED('Invalid token');
      if (key.revokedAt) throw UNAUTHORIZED('Token has been revoked');
      // X-Org-ID is ignored with an API key: the key belongs to one organization.
      return { kind: 'api_key', orgId: key.orgId, credentialId: key.id, userId: null, role: null, scopes: key.scopes };
    }

    const session = await this.credentials.findSessionByHash(hashToken(token));
    if (!session) throw UNAUTHORIZED('Invalid token');
    if (session.revokedAt) throw UNAUTHORIZED('Token has been revoked');
    if (session.expiresAt.getTime() <= now.getTime()) throw UNAUTHORIZED('Token has expired; log in again');

    if (requestedOrgId !== undefined) {
      const role = await this.accounts.membership(session.userId, requestedOrgId);
      // Same answer for an unknown organization and one the user is not a member of.
      if (!role) throw forbidden('X-Org-ID names an organization you are not a member of');
      return { kind: 'session', orgId: requestedOrgId, credentialId: session.id, userId: session.userId, role, scopes: [] };
    }
    const [first] = await this.accounts.memberships(session.userId);
    if (!first) throw forbidden('You are not a member of any organization');
    return {
      kind: 'session',
      orgId: first.organization.id,
      credentialId: session.id,
      userId: session.userId,
      role: first.role,
      scopes: [],
    };
  }
}
