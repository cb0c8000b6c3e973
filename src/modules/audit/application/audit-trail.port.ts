export type ActorType = 'user' | 'api_key' | 'operator' | 'anonymous';

export interface AuditEntry {
  orgId: string | null;
  actorType: ActorType;
  actorId: string | null;
  action: string;
  targetId?: string | null;
  ipAddress: string | null;
  data?: Record<string, unknown>;
}

/** Appends to the audit log, inside the caller's transaction when there is one. */
export abstract class AuditTrail {
  abstract record(entry: AuditEntry): Promise<void>;
}
