import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { IdempotencyScope } from './idempotency';

/**
 * Answers holding a secret (POST /v1/api-keys: the new token) are stored for replay encrypted,
 * so that idempotency_records never holds the secret in clear:
 *
 * - AES-256-GCM, a random 96-bit IV per record, the request's fingerprint as associated data
 *   (a sealed body cannot be moved to another record and still open).
 * - The key is HKDF-SHA256 of the raw Idempotency-Key (which the database never stores: only its
 *   SHA-256), salted with the server-side secret IDEMPOTENCY_SECRET and bound to the organization.
 *   Only a client holding its Idempotency-Key, talking to a server holding the secret, gets the
 *   body back: a database dump alone opens nothing, even for a guessable key.
 * - Stored text: `sealed:v1:` + base64(IV ‖ tag ‖ ciphertext). A plain body is JSON (or empty),
 *   so it never starts with the prefix.
 */
const PREFIX = 'sealed:v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** The salt when IDEMPOTENCY_SECRET is unset: then only the key's own entropy protects a dump (README). */
export const PUBLIC_SEAL_SALT = 'cloud-disk-service idempotent answer, no server secret set';

function sealingKey(scope: IdempotencyScope, secret: string | undefined): Buffer {
  return Buffer.from(
    hkdfSync('sha256', Buffer.from(scope.key, 'utf8'), Buffer.from(secret ?? PUBLIC_SEAL_SALT, 'utf8'), Buffer.from(`cds idempotent answer v1|${scope.orgId}`, 'utf8'), 32),
  );
}

export function isSealed(body: string): boolean {
  return body.startsWith(PREFIX);
}

/** The body encrypted for this scope (key, organization, fingerprint). */
export function sealBody(body: string, scope: IdempotencyScope, secret: string | undefined): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', sealingKey(scope, secret), iv);
  cipher.setAAD(Buffer.from(scope.fingerprint, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(body, 'utf8'), cipher.final()]);
  return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64');
}

/**
 * The clear body of a sealed one (a plain body as is). Throws when it does not open: another
 * secret (IDEMPOTENCY_SECRET changed within the 24 hours a record lives) or a tampered record.
 */
export function openBody(stored: string, scope: IdempotencyScope, secret: string | undefined): string {
  if (!isSealed(stored)) return stored;
  const raw = Buffer.from(stored.slice(PREFIX.length), 'base64');
  const decipher = createDecipheriv('aes-256-gcm', sealingKey(scope, secret), raw.subarray(0, IV_BYTES));
  decipher.setAAD(Buffer.from(scope.fingerprint, 'utf8'));
  decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
}
