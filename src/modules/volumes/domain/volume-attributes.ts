import { DomainError, invalidRequest } from '../../../shared/kernel/errors/domain-error';

/**
 * What a caller may set on a volume besides its size and place (lifecycle.md "Volume,
 * extended"): its name and labels. The database holds the same rules as CHECK constraints.
 */

/** 1-64 of letters, digits, `.`, `_`, `-`, starting with a letter or digit. */
export const VOLUME_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
export const VOLUME_NAME_RULE = '1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit';

export const MAX_LABELS = 32;
/** 1-63 of lower-case letters, digits, `.`, `_`, `/`, `-`. */
export const LABEL_KEY_PATTERN = /^[a-z0-9._/-]{1,63}$/;
export const LABEL_KEY_RULE = '1 to 63 of a-z, 0-9, ".", "_", "/", "-"';
export const MAX_LABEL_VALUE_LENGTH = 255;
export const MAX_NOTE_LENGTH = 1000;

export type Labels = Record<string, string>;

export function isVolumeName(value: unknown): value is string {
  return typeof value === 'string' && VOLUME_NAME_PATTERN.test(value);
}

/** The name, or 400 invalid_request naming `field`. */
export function checkVolumeName(value: unknown, field = 'name'): string {
  if (typeof value !== 'string') throw invalidRequest(`${field} must be a string: ${VOLUME_NAME_RULE}`, { field });
  if (!VOLUME_NAME_PATTERN.test(value)) throw invalidRequest(`${field} must be ${VOLUME_NAME_RULE}`, { field });
  return value;
}

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

/** A `label` filter of GET /v1/volumes: `key=value` (the value may be empty), or 400 naming `field`. */
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

/** 409 conflict: another volume of the organization that is not deleted has the name. */
export function nameTaken(name: string): DomainError {
  return new DomainError('conflict', `The organization already has a volume named ${name}; names are unique among volumes not deleted`, { field: 'name' });
}
