import { AuditEntry } from './audit-trail.port';
import { Principal } from '../../auth/domain/principal';

/** Who the audit row names for a request: the API key, or the session's user. */
export function auditActor(principal: Principal): Pick<AuditEntry, 'actorType' | 'actorId'> {
  return principal.kind === 'api_key'
    ? { actorType: 'api_key', actorId: principal.credentialId }
    : { actorType: 'user', actorId: principal.userId };
}
