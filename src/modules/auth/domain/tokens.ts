import { hash, randomBytes, scrypt as scryptCb, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { randomBase62 } from '../../../shared/kernel/ids/ids';

export const API_KEY_PREFIX = 'cds_live_';
export const SESSION_PREFIX = 'cds_sess_';
const TOKEN_PATTERN = /^cds_(live|sess)_[A-Za-z0-9]{32,128}$/;

export type TokenKind = 'api_key' | 'session';

export function newApiKeyToken(): string {
  return API_KEY_PREFIX + randomBase62(40);
}
export function newSessionToken(): string {
  return SESSION_PREFIX + randomBase62(40);
}

/** The kind of a well-formed token, or undefined for anything else. */
export function tokenKind(token: string): TokenKind | undefined {
  const match = TOKEN_PATTERN.exec(token);
  if (!match) return undefined;
  return match[1] === 'live' ? 'api_key' : 'session';
}

/**
 * Tokens are stored only as SHA-256; looking one up by its hash is a constant-time equality on the
 * index. Node's one-shot `hash` (no Hash object per request: every authenticated request hashes its token).
 */
export function hashToken(token: string): Buffer {
  return hash('sha256', token, 'buffer');
}

const scrypt = promisify(scryptCb) as (password: string, salt: Buffer, keylen: number, options: { N: number; r: number; p: number }) => Promise<Buffer>;
const SCRYPT = { N: 16384, r: 8, p: 1 };
const KEY_LENGTH = 32;

/** scrypt (node:crypto): `scrypt$N$r$p$salt$hash`, salt and hash in base64. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(password, salt, KEY_LENGTH, SCRYPT);
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64'), hash.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, saltText, hashText] = stored.split('$');
  if (scheme !== 'scrypt' || !saltText || !hashText) return false;
  const expected = Buffer.from(hashText, 'base64');
  const actual = await scrypt(password, Buffer.from(saltText, 'base64'), expected.length, { N: Number(n), r: Number(r), p: Number(p) });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** A hash of a password nobody knows: verified against when the email is unknown, so timing does not tell. */
export const DUMMY_PASSWORD_HASH =
  'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';
