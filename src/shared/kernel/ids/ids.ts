import { randomBytes } from 'node:crypto';

export type IdPrefix = 'org' | 'usr' | 'key' | 'vol' | 'vm' | 'op' | 'req' | 'ses' | 'aud' | 'quo';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Appends base62 characters drawn uniformly from `bytes` (rejection sampling, no modulo bias) to `out`, up to `length`. */
function appendBase62(out: string, length: number, bytes: Uint8Array): string {
  for (const byte of bytes) {
    if (out.length >= length) break;
    if (byte < 248) out += ALPHABET[byte % 62];
  }
  return out;
}

/** `length` characters drawn uniformly from base62, from fresh random bytes (tokens use it). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) out = appendBase62(out, length, randomBytes(length * 2));
  return out;
}

/**
 * Random bytes for ids, drawn from the same CSPRNG a block at a time (as crypto.randomUUID does):
 * one randomBytes call per about 170 ids instead of one per id. Each byte is used once.
 */
const ID_ENTROPY_BLOCK = 8192;
let idEntropy = new Uint8Array(0);
let idEntropyOffset = 0;

function idBytes(n: number): Uint8Array {
  if (idEntropyOffset + n > idEntropy.length) {
    idEntropy = randomBytes(ID_ENTROPY_BLOCK);
    idEntropyOffset = 0;
  }
  idEntropyOffset += n;
  return idEntropy.subarray(idEntropyOffset - n, idEntropyOffset);
}

/** A prefixed opaque id: `vol_` + 24 url-safe random characters. */
export function newId(prefix: IdPrefix): string {
  let out = '';
  while (out.length < 24) out = appendBase62(out, 24, idBytes(32));
  return `${prefix}_${out}`;
}

export function hasPrefix(id: string, prefix: IdPrefix): boolean {
  return id.startsWith(`${prefix}_`) && id.length > prefix.length + 1;
}
