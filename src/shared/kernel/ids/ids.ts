import { randomBytes } from 'node:crypto';

export type IdPrefix = 'org' | 'usr' | 'key' | 'vol' | 'vm' | 'op' | 'req' | 'ses' | 'aud' | 'quo';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `length` characters drawn uniformly from base62 (rejection sampling, no modulo bias). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

/** A prefixed opaque id: `vol_` + 24 url-safe random characters. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(24)}`;
}

export function hasPrefix(id: string, prefix: IdPrefix): boolean {
  return id.startsWith(`${prefix}_`) && id.length > prefix.length + 1;
}
