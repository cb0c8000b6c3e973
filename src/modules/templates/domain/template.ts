/**
 * A template: a one-click application the operator offers (servers.md "Templates and
 * deployments"), from the seed's `templates` member. `versions` oldest first, the last the
 * default. `simulate` is read by the simulated provider only (never shown).
 */
export interface TemplateVariable {
  name: string;
  description: string;
  required: boolean;
  secret: boolean;
}

export interface TemplateSimulation {
  /** fail: deploys and updates fail at `installing` (code internal). */
  deploy: 'ok' | 'fail';
  /** What health checks answer. */
  health: 'healthy' | 'unhealthy';
}

export interface Template {
  id: string;
  name: string;
  versions: string[];
  variables: TemplateVariable[];
  simulate: TemplateSimulation | null;
}

/** Variable names: 1–64 of [A-Za-z_][A-Za-z0-9_]*. */
export const VARIABLE_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
export const VARIABLE_NAME_RULE = '1 to 64 of A-Z a-z 0-9 _, not beginning with a digit';

/** What a secret variable reads as (null would read as unset). A secret may not be sent as this. */
export const REDACTED = '[redacted]';

/** A variable's value: a string of 0 to 4096 characters, no NUL. */
export const MAX_VARIABLE_LENGTH = 4096;

export const defaultVersion = (t: Template): string => t.versions[t.versions.length - 1];

/** The template as GET /v1/templates shows it. */
export function presentTemplate(t: Template) {
  return {
    id: t.id,
    name: t.name,
    versions: [...t.versions],
    variables: t.variables.map((v) => ({ name: v.name, description: v.description, required: v.required, secret: v.secret })),
  };
}
