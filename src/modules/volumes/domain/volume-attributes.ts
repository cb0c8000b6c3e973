import { DomainError, invalidRequest } from '../../../shared/kernel/errors/domain-error';

/**
 * What a caller may set on a volume besides its size and place (lifecycle.md "Volume,
 * extended"): its name and note (labels: prepaid/domain/labels.ts, shared with the other
 * resources). The database holds the same rules as CHECK constraints.
 */

/** 1-64 of letters, digits, `.`, `_`, `-`, starting with a letter or digit. */
export const VOLUME_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
export const VOLUME_NAME_RULE = '1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit';

export const MAX_NOTE_LENGTH = 1000;

export function isVolumeName(value: unknown): value is string {
  return typeof value === 'string' && VOLUME_NAME_PATTERN.test(value);
}

/** The name, or 400 invalid_request naming `field`. */
export function checkVolumeName(value: unknown, field = 'name'): string {
  if (typeof value !== 'string') throw invalidRequest(`${field} must be a string: ${VOLUME_NAME_RULE}`, { field });
  if (!VOLUME_NAME_PATTERN.test(value)) throw invalidRequest(`${field} must be ${VOLUME_NAME_RULE}`, { field });
  return value;
}

/** 409 conflict: another volume of the organization that is not deleted has the name. */
/** 409 out_of_stock: the region has less than `sizeGb` GB of disk capacity left. */
export function regionFull(regionId: string, sizeGb: number): DomainError {
  return new DomainError('out_of_stock', `Region ${regionId} has less than ${sizeGb} GB of disk capacity left`);
}

export function nameTaken(name: string): DomainError {
  return new DomainError('conflict', `The organization already has a volume named ${name}; names are unique among volumes not deleted`, { field: 'name' });
}
