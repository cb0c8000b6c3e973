export const ROLES = ['owner', 'admin', 'developer', 'viewer'] as const;
export type Role = (typeof ROLES)[number];
export const SCOPES = ['vm:read', 'vm:write', 'billing:read', 'billing:write', 'webhooks:write', 'audit:read'] as const;
export type Scope = (typeof SCOPES)[number];

/** A write scope includes its read scope (accounts.md); nothing else implies anything. */
const IMPLIED_BY: Readonly<Partial<Record<Scope, Scope>>> = { 'vm:read': 'vm:write', 'billing:read': 'billing:write' };

/** Whether a key granted `granted` may do what `needed` allows. */
export function grants(granted: readonly Scope[], needed: Scope): boolean {
  if (granted.includes(needed)) return true;
  const writer = IMPLIED_BY[needed];
  return writer !== undefined && granted.includes(writer);
}

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}
export function isScope(value: unknown): value is Scope {
  return typeof value === 'string' && (SCOPES as readonly string[]).includes(value);
}

/** Who is calling, for which organization: what every use case receives instead of headers. */
export type Principal =
  | { kind: 'api_key'; orgId: string; credentialId: string; userId: null; role: null; scopes: readonly Scope[] }
  | { kind: 'session'; orgId: string; credentialId: string; userId: string; role: Role; scopes: readonly Scope[] };

/**
 * A valid credential, before an organization is selected: what authentication (401) yields and
 * the rate limit counts against. Turned into a Principal after the rate limit (X-Org-ID: 403).
 */
export type Credential =
  | { kind: 'api_key'; id: string; orgId: string; scopes: readonly Scope[] }
  | { kind: 'session'; id: string; userId: string };

/** What a route needs: an API key scope, the session roles allowed, or sessions only. */
export interface AccessRule {
  scope?: Scope;
  /** An API key needs any one of these (with their implied reads); for routes two scopes open. */
  anyScope?: readonly Scope[];
  roles?: readonly Role[];
  sessionOnly?: boolean;
  /**
   * The route acts for the signed-in user, not for an organization (their organizations,
   * accepting an invitation): sessions only, X-Org-ID ignored, allowed to a user who belongs to
   * no organization. The controller reads the user with @CurrentUser().
   */
  userLevel?: boolean;
}

export const SESSIONS_ONLY = 'This endpoint is for sessions only; API keys cannot use it';

/** Whether the principal satisfies the rule; the reason when it does not. */
export function checkAccess(principal: Principal, rule: AccessRule): { allowed: true } | { allowed: false; reason: string } {
  if (principal.kind === 'api_key') {
    if (rule.sessionOnly) return { allowed: false, reason: SESSIONS_ONLY };
    const needed = rule.anyScope ?? (rule.scope ? [rule.scope] : []);
    if (needed.length === 0) return { allowed: false, reason: 'This endpoint is not available to API keys' };
    if (!needed.some((scope) => grants(principal.scopes, scope))) {
      return { allowed: false, reason: `The API key lacks the scope ${needed.join(' or ')}` };
    }
    return { allowed: true };
  }
  if (rule.roles && !rule.roles.includes(principal.role)) {
    return { allowed: false, reason: `Role ${principal.role} may not do this; it needs one of: ${rule.roles.join(', ')}` };
  }
  return { allowed: true };
}

export const ANY_ROLE: readonly Role[] = ROLES;
export const WRITER_ROLES: readonly Role[] = ['developer', 'admin', 'owner'];
export const ADMIN_ROLES: readonly Role[] = ['admin', 'owner'];
