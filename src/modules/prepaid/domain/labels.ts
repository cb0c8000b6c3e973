import { invalidRequest } from '../../../shared/kernel/errors/domain-error';

/**
 * Labels: the caller's key/value pairs on any resource (lifecycle.md "Volume, extended"; servers
 * and the resources to come take the same rules). The database holds the same rules as a CHECK
 * constraint (volume_labels_valid).
 */

export const MAX_LABELS = 32;
/** 1-63 of lower-case letters, digits, `.`, `_`, `/`, `-`. */
export const LABEL_KEY_PATTERN = /^[a-z0-9._/-]{1,63}$/;
export const LABEL_KEY_RULE = '1 to 63 of a-z, 0-9, ".", "_", "/", "-"';
export const MAX_LABEL_VALUE_LENGTH = 255;

export type Labels = Record<string, string>;

/** The labels as a fresh plain object, or 400 invalid_request naming the first bad member (`labels.<key>`). */
export function checkLabels(value: unknown, field = 'labels'): Labels {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidRequest(`${field} must be an object of string values`, { field });
  }
  const entries = Object.entries(value);
  if (entries.length > MAX_LABELS) throw invalidRequest(`${field} may hold at most ${MAX_LABELS} labels, got ${entries.length}`, { field });
  for (const [key, v] of entries) {
    if (!LABEL_KEY_PATTERN.test(key)) {
      throw invalidRequest(`${field}: key ${JSON.stringify(key)} must be ${LABEL_KEY_RULE}`, { field: `${field}.${key}` });
    }
    if (typeof v !== 'string') throw invalidRequest(`${field}.${key} must be a string`, { field: `${field}.${key}` });
    if (v.length > MAX_LABEL_VALUE_LENGTH) {
      throw invalidRequest(`${field}.${key} must be at most ${MAX_LABEL_VALUE_LENGTH} characters`, { field: `${field}.${key}` });
    }
    if (v.includes('\u0000')) throw invalidRequest(`${field}.${key} must not contain NUL (\\u0000) characters`, { field: `${field}.${key}` });
  }
  // fromEntries defines own properties, so even a key such as "__proto__" stays a label.
  return Object.fromEntries(entries) as Labels;
}

/** A `label` filter of a list (GET /v1/volumes, /v1/servers): `key=value` (the value may be empty), or 400 naming `field`. */
export function parseLabelSelector(text: string, field = 'label'): [string, string] {
  const at = text.indexOf('=');
  if (at < 0) throw invalidRequest(`${field} must be key=value, got ${JSON.stringify(text)}`, { field });
  const key = text.slice(0, at);
  const value = text.slice(at + 1);
  if (!LABEL_KEY_PATTERN.test(key)) throw invalidRequest(`${field}: key ${JSON.stringify(key)} must be ${LABEL_KEY_RULE}`, { field });
  if (value.length > MAX_LABEL_VALUE_LENGTH) throw invalidRequest(`${field}: value must be at most ${MAX_LABEL_VALUE_LENGTH} characters`, { field });
  return [key, value];
}

/** Whether two label maps hold the same pairs (order does not matter). */
export function sameLabels(a: Labels, b: Labels): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && b[k] === a[k]);
}

/** Whether `labels` holds every pair of `selectors` (the list filters; the SQL of the database adapters says the same). */
export function matchesLabels(labels: Labels, selectors: readonly [string, string][]): boolean {
  return selectors.every(([k, val]) => Object.prototype.hasOwnProperty.call(labels, k) && labels[k] === val);
}
