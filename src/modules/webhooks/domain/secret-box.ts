import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Signing secrets at rest: AES-256-GCM, a random 96-bit IV each, the endpoint's id as associated
 * data (a sealed secret cannot be moved to another endpoint and still open), under a key that is
 * HKDF-SHA256 of WEBHOOK_SECRETS_KEY (the same value on every process; unset: a public constant,
 * so only a deployment that sets it keeps a database dump from opening them).
 * Stored text: `sealed:v1:` + base64(IV ‖ tag ‖ ciphertext).
 *
 * Other secrets at rest use the same box under their own purpose (another HKDF info, another
 * setting, another public constant): a deployment's secret variables (templates module).
 */
const PREFIX = 'sealed:v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;
export const PUBLIC_SECRETS_KEY = 'cloud-disk-service webhook secrets, no server key set';

/** What a sealed secret is for: the HKDF info, and the key material used when no server key is set. */
export interface SecretPurpose {
  info: string;
  publicKey: string;
}

const WEBHOOK_SECRETS: SecretPurpose = { info: 'cds webhook secret v1', publicKey: PUBLIC_SECRETS_KEY };

function key(secretsKey: string | undefined, purpose: SecretPurpose): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(secretsKey ?? purpose.publicKey, 'utf8'), Buffer.alloc(0), Buffer.from(purpose.info, 'utf8'), 32));
}

/** `endpointId`: the id of the row the secret belongs to (associated data). */
export function sealSecret(secret: string, endpointId: string, secretsKey: string | undefined, purpose: SecretPurpose = WEBHOOK_SECRETS): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key(secretsKey, purpose), iv);
  cipher.setAAD(Buffer.from(endpointId, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64');
}

/** Throws when it does not open (another WEBHOOK_SECRETS_KEY, or a tampered row). */
export function openSecret(sealed: string, endpointId: string, secretsKey: string | undefined, purpose: SecretPurpose = WEBHOOK_SECRETS): string {
  if (!sealed.startsWith(PREFIX)) throw new Error('not a sealed secret');
  const raw = Buffer.from(sealed.slice(PREFIX.length), 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key(secretsKey, purpose), raw.subarray(0, IV_BYTES));
  decipher.setAAD(Buffer.from(endpointId, 'utf8'));
  decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
}
