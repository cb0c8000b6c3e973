import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Signing secrets at rest: AES-256-GCM, a random 96-bit IV each, the endpoint's id as associated
 * data (a sealed secret cannot be moved to another endpoint and still open), under a key that is
 * HKDF-SHA256 of WEBHOOK_SECRETS_KEY (the same value on every process; unset: a public constant,
 * so only a deployment that sets it keeps a database dump from opening them).
 * Stored text: `sealed:v1:` + base64(IV ‖ tag ‖ ciphertext).
 */
const PREFIX = 'sealed:v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;
export const PUBLIC_SECRETS_KEY = 'cloud-disk-service webhook secrets, no server key set';

function key(secretsKey: string | undefined): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(secretsKey ?? PUBLIC_SECRETS_KEY, 'utf8'), Buffer.alloc(0), Buffer.from('cds webhook secret v1', 'utf8'), 32));
}

export function sealSecret(secret: string, endpointId: string, secretsKey: string | undefined): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key(secretsKey), iv);
  cipher.setAAD(Buffer.from(endpointId, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64');
}

/** Throws when it does not open (another WEBHOOK_SECRETS_KEY, or a tampered row). */
export function openSecret(sealed: string, endpointId: string, secretsKey: string | undefined): string {
  if (!sealed.startsWith(PREFIX)) throw new Error('not a sealed secret');
  const raw = Buffer.from(sealed.slice(PREFIX.length), 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key(secretsKey), raw.subarray(0, IV_BYTES));
  decipher.setAAD(Buffer.from(endpointId, 'utf8'));
  decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
}
