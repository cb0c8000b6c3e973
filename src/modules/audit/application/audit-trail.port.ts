/** Who did it: a user (session), an API key, the service itself (operator CLI), or nobody known (a failed login). */
export type ActorType = 'user' | 'api_key' | 'system' | 'anonymous';

export interface AuditEntry {
  orgId: string | null;
  actorType: ActorType;
  actorId: string | null;
  action: string;
  targetId?: string | null;
  /** The kind of the target; by default read from the target id's prefix (`vol_` volume, `key_` api_key, …). */
  targetType?: string | null;
  ipAddress: string | null;
  /** The X-Request-Id of the HTTP request; by default the request being handled, if any. */
  requestId?: string | null;
  /** Never a token, password or secret. */
  data?: Record<string, unknown>;
}

/** Appends to the audit log, inside the caller's transaction when there is one (so it commits or rolls back with the change). */
export abstract class AuditTrail {
  abstract record(entry: AuditEntry): Promise<void>;
}
