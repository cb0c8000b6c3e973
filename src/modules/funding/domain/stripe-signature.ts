import { createHmac, timingSafeEqual } from 'node:crypto';

/** Seconds a signature's `t` may differ from now, either side. */
export const SIGNATURE_TOLERANCE_S = 300;

/** Lowercase hex HMAC-SHA256 with the whole secret's UTF-8 bytes (whsec_ included, as Stripe's libraries) over `t.body`. */
export function stripeSignature(secret: string, t: number, rawBody: Buffer | string): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(`${t}.`, 'utf8')
    .update(typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody)
    .digest('hex');
}

/** The `Stripe-Signature` header value for a body signed now. */
export function stripeSignatureHeader(secret: string, t: number, rawBody: Buffer | string): string {
  return `t=${t},v1=${stripeSignature(secret, t, rawBody)}`;
}

/**
 * Whether `header` (`t=…,v1=…[,v1=…]`, other keys ignored, v0 never counts) signs `rawBody` with
 * `secret` at a `t` within the tolerance of `nowS`. Any v1 may match; compared in constant time.
 */
export function verifyStripeSignature(header: string | undefined, rawBody: Buffer, secret: string, nowS: number, toleranceS = SIGNATURE_TOLERANCE_S): boolean {
  if (header === undefined || header.length > 4096) return false;
  let t: number | undefined;
  let ts = 0;
  const v1: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') {
      ts++;
      if (!/^\d{1,12}$/.test(value)) return false;
      t = Number(value);
    } else if (key === 'v1' && /^[0-9a-f]{64}$/.test(value)) {
      v1.push(value);
    }
  }
  if (ts !== 1 || t === undefined || v1.length === 0) return false;
  if (Math.abs(nowS - t) > toleranceS) return false;
  const expected = Buffer.from(stripeSignature(secret, t, rawBody), 'hex');
  let ok = false;
  for (const candidate of v1) if (timingSafeEqual(expected, Buffer.from(candidate, 'hex'))) ok = true;
  return ok;
}
