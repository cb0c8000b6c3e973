import { AuditEntry } from './audit-trail.port';
import { Principal } from '../../auth/domain/principal';

/** The service acting for an organization on its own (terms.md: an automatic renewal), not a request. */
export interface SystemActor {
  kind: 'system';
  orgId: string;
}

/** Who the audit row names: the API key, the session's user, or the system (no id). */
export function auditActor(principal: Principal | SystemActor): Pick<AuditEntry, 'actorType' | 'actorId'> {
  if (principal.kind === 'system') return { actorType: 'system', actorId: null };
  return principal.kind === 'api_key'
    ? { actorType: 'api_key', actorId: principal.credentialId }
    : { actorType: 'user', actorId: principal.userId };
}
