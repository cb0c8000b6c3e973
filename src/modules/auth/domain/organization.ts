import { invalidRequest } from '../../../shared/kernel/errors/domain-error';

export const MAX_ORGANIZATION_NAME = 100;

/** An organization's name over HTTP: 1 to 100 characters, not blank, no control character (400 naming `name`). */
export function validOrganizationName(name: string, field = 'name'): string {
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f]/.test(name)) throw invalidRequest(`${field} must not hold control characters`, { field });
  if (name.trim().length === 0) throw invalidRequest(`${field} must not be blank`, { field });
  if ([...name].length > MAX_ORGANIZATION_NAME) throw invalidRequest(`${field} must be 1 to ${MAX_ORGANIZATION_NAME} characters`, { field });
  return name;
}
