import { invalidRequest } from '../../../shared/kernel/errors/domain-error';
import { MAX_VARIABLE_LENGTH, REDACTED, Template } from './template';

export const DEPLOYMENT_STATUSES = ['deploying', 'active', 'failed', 'updating', 'removing', 'removed'] as const;
export type DeploymentStatus = (typeof DEPLOYMENT_STATUSES)[number];
export type DeploymentHealth = 'unknown' | 'healthy' | 'unhealthy';

/** Deployments per server that are not removed. */
export const DEPLOYMENTS_PER_SERVER = 10;

/**
 * A template on a server, as stored. `variables` is the map as shown: the values set, a secret
 * one as REDACTED; the secret values themselves only in `secretsSealed` (sealed, opened by the
 * worker only). An accepted update's target (`pending*`) replaces version and variables when it
 * succeeds.
 */
export interface Deployment {
  id: string;
  orgId: string;
  serverId: string;
  template: string;
  version: string;
  status: DeploymentStatus;
  health: DeploymentHealth;
  healthCheckedAt: Date | null;
  variables: Record<string, string>;
  secretsSealed: string | null;
  pendingVersion: string | null;
  pendingVariables: Record<string, string> | null;
  pendingSecretsSealed: string | null;
  createdAt: Date;
  removedAt: Date | null;
}

/** Variables resolved against the template: the map as shown, and the secret values apart. */
export interface ResolvedVariables {
  shown: Record<string, string>;
  secrets: Record<string, string>;
}

const field = (name: string) => `variables.${name}`;

/**
 * Checks `given` against the template and merges it into `current` (absent: none): a member
 * replaces, null unsets an optional one (only when `allowNull`, on update), absent keeps. 400
 * naming the variable: unknown, not a string of 0–4096 characters without NUL, a secret equal to
 * "[redacted]", a required one missing or empty.
 */
export function resolveVariables(
  template: Template,
  given: Record<string, unknown> | undefined,
  current: ResolvedVariables | undefined,
  allowNull: boolean,
): ResolvedVariables {
  const shown: Record<string, string> = { ...(current?.shown ?? {}) };
  const secrets: Record<string, string> = { ...(current?.secrets ?? {}) };
  const declared = new Map(template.variables.map((v) => [v.name, v]));
  for (const [name, value] of Object.entries(given ?? {})) {
    const variable = declared.get(name);
    if (!variable) throw invalidRequest(`variables: ${name} is no variable of template ${template.id}`, { field: field(name) });
    if (value === null && allowNull) {
      if (variable.required) throw invalidRequest(`variables: ${name} is required and cannot be unset`, { field: field(name) });
      delete shown[name];
      delete secrets[name];
      continue;
    }
    if (typeof value !== 'string' || value.length > MAX_VARIABLE_LENGTH || value.includes('\u0000')) {
      throw invalidRequest(`variables: ${name} must be a string of 0 to ${MAX_VARIABLE_LENGTH} characters without NUL${allowNull ? ', or null' : ''}`, {
        field: field(name),
      });
    }
    if (variable.secret && value === REDACTED) {
      throw invalidRequest(`variables: ${name} is secret and cannot be set to "${REDACTED}" (leave it out to keep its value)`, { field: field(name) });
    }
    if (variable.required && value === '') throw invalidRequest(`variables: ${name} is required and must not be empty`, { field: field(name) });
    if (variable.secret) {
      secrets[name] = value;
      shown[name] = REDACTED;
    } else {
      shown[name] = value;
      delete secrets[name];
    }
  }
  for (const v of template.variables) {
    if (v.required && shown[v.name] === undefined) throw invalidRequest(`variables: ${v.name} is required`, { field: field(v.name) });
  }
  return { shown: sortKeys(shown), secrets: sortKeys(secrets) };
}

/** The version asked for, or the default (the last); 400 naming `version` when not offered. */
export function resolveVersion(template: Template, version: unknown): string {
  if (version === undefined) return template.versions[template.versions.length - 1];
  if (typeof version !== 'string' || !template.versions.includes(version)) {
    throw invalidRequest(`version must be one of the versions of template ${template.id}: ${template.versions.join(', ')}`, { field: 'version' });
  }
  return version;
}

function sortKeys(map: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of Object.keys(map).sort()) out[k] = map[k];
  return out;
}

/** The Deployment as the API shows it (secrets as "[redacted]", never their values). */
export function presentDeployment(d: Deployment) {
  return {
    id: d.id,
    server_id: d.serverId,
    template: d.template,
    version: d.version,
    status: d.status,
    health: d.health,
    health_checked_at: d.healthCheckedAt?.toISOString() ?? null,
    variables: { ...d.variables },
    created_at: d.createdAt.toISOString(),
  };
}

/** What an update changes, old and new (secrets as "[redacted]"), for its audit entry. */
export function changedMembers(d: Deployment, version: string, shown: Record<string, string>, secretsChanged: ReadonlySet<string>) {
  const changes: Record<string, unknown> = {};
  if (version !== d.version) changes.version = { old: d.version, new: version };
  const variables: Record<string, { old: string | null; new: string | null }> = {};
  for (const name of new Set([...Object.keys(d.variables), ...Object.keys(shown)])) {
    const before = d.variables[name] ?? null;
    const after = shown[name] ?? null;
    if (before !== after || secretsChanged.has(name)) variables[name] = { old: before, new: after };
  }
  if (Object.keys(variables).length > 0) changes.variables = variables;
  return changes;
}
