import { createHmac, randomBytes } from 'node:crypto';

/** Standard Webhooks secrets: `whsec_` + standard base64 of the key's bytes. */
export const SECRET_PREFIX = 'whsec_';

/** A new signing secret: 24 random bytes. */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(24).toString('base64');
}

/** One `v1,` signature (Standard Webhooks v1): HMAC-SHA256 keyed by the secret's bytes over `id.timestamp.body`. */
export function signature(secret: string, webhookId: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  return 'v1,' + createHmac('sha256', key).update(`${webhookId}.${timestamp}.${body}`).digest('base64');
}

/** The `webhook-signature` header: one signature per secret, space-separated, in the order given (the new secret first during a rotation). */
export function signatureHeader(secrets: readonly string[], webhookId: string, timestamp: number, body: string): string {
  return secrets.map((s) => signature(s, webhookId, timestamp, body)).join(' ');
}
