import { invalidRequest } from '../../../shared/kernel/errors/domain-error';

export const MAX_EMAIL_LENGTH = 254;

/**
 * Emails are stored lower-cased. Lower-casing can lengthen a string ("İ" becomes two code
 * units), so the length limit is checked on the stored form, naming the field.
 */
export function normalizeEmail(email: string, field = 'email'): string {
  const normalized = email.toLowerCase();
  if (normalized.length > MAX_EMAIL_LENGTH) {
    throw invalidRequest(`${field} must be at most ${MAX_EMAIL_LENGTH} characters once lower-cased`, { field });
  }
  return normalized;
}
