/**
 * Who did it: a user (session), an API key, the service itself (operator CLI), nobody known (a
 * failed login), or the service's staff (admin API: actorId holds the staff role, never who).
 */
export type ActorType = 'user' | 'api_key' | 'system' | 'anonymous' | 'staff';

export interface AuditEntry {
  orgId: string | null;
  actorType: ActorType;
  actorId: string | null;
  action: string;
  targetId?: string | null;
  /** The kind of the target; by default read from the target id's prefix (`vol_` volume, `key_` api_key, …). */
  targetType?: string | null;
  ipAddress: string | null;
  /**
   * The server's id of the HTTP request (unique per request); by default the request being
   * handled, if any, and then clientRequestId is that request's too.
   */
  requestId?: string | null;
  /** The client's X-Request-Id of that request; read only when requestId is given (default null). */
  clientRequestId?: string | null;
  /** Never a token, password or secret. */
  data?: Record<string, unknown>;
}

/** Appends to the audit log, inside the caller's transaction when there is one (so it commits or rolls back with the change). */
export abstract class AuditTrail {
  abstract record(entry: AuditEntry): Promise<void>;
  /** record() of several entries, in their order, in one statement (a sweep's batch). */
  abstract recordMany(entries: readonly AuditEntry[]): Promise<void>;
}
