import { randomBytes } from 'node:crypto';

export type IdPrefix = 'org' | 'usr' | 'key' | 'vol' | 'vm' | 'op' | 'req' | 'ses' | 'aud' | 'quo' | 'ssh' | 'fwr' | 'inv' | 'we' | 'evt' | 'dlv' | 'tu' | 'dep' | 'stf' | 'stk' | 'sau' | 'adj' | 'rfd' | 'snap' | 'img' | 'rip' | 'net';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `length` characters drawn uniformly from base62 (rejection sampling, no modulo bias), from `bytes(n)`. */
export function randomBase62(length: number, bytes: (n: number) => Uint8Array = randomBytes): string {
  let out = '';
  while (out.length < length) {
    const drawn = bytes(length * 2);
    for (let i = 0; i < drawn.length && out.length < length; i++) {
      if (drawn[i] < 248) out += ALPHABET[drawn[i] % 62];
    }
  }
  return out;
}

const ID_POOL_BYTES = 4096;
let idPool = new Uint8Array(0);
let idPoolOffset = 0;

/**
 * Random bytes for ids, taken from a pool filled 4 KiB at a time (one call into the CSPRNG per
 * about 80 ids, not one per id: every request gets an id). Never for secrets: tokens draw their
 * own bytes (auth/domain/tokens.ts).
 */
function idBytes(n: number): Uint8Array {
  if (idPoolOffset + n > idPool.length) {
    idPool = randomBytes(ID_POOL_BYTES);
    idPoolOffset = 0;
  }
  const out = idPool.subarray(idPoolOffset, idPoolOffset + n);
  idPoolOffset += n;
  return out;
}

/** A prefixed opaque id: `vol_` + 24 url-safe random characters. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(24, idBytes)}`;
}

export function hasPrefix(id: string, prefix: IdPrefix): boolean {
  return id.startsWith(`${prefix}_`) && id.length > prefix.length + 1;
}
