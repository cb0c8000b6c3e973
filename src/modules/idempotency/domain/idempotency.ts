import { createHash, createHmac } from 'node:crypto';

/** How long a key is remembered. */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;

/** 1 to 255 printable ASCII characters (space to tilde). */
export function isValidIdempotencyKey(key: string): boolean {
  return /^[\x20-\x7E]{1,255}$/.test(key);
}

/** JSON with object keys sorted at every depth: equal documents give equal text. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.keys(value as Record<string, unknown>)
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
  return `{${entries.join(',')}}`;
}

/**
 * What makes two requests "the same": method, path and the parsed body (canonical). SHA-256, hex.
 * Never stored as is (a body's secret could be guessed back from it): keyedScope() turns it into
 * the stored fingerprint.
 */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  return createHash('sha256').update(`${method.toUpperCase()} ${path}\n${canonicalJson(body ?? null)}`).digest('hex');
}

/** A response as stored for replay: status, the body's exact text, the headers to repeat. */
export interface StoredResponse {
  status: number;
  body: string;
  headers: Record<string, string>;
}

/**
 * What the database keeps of an Idempotency-Key: its SHA-256 (hex), never the key itself. The key
 * is what a replay of a sealed answer is decrypted with (sealed-response.ts), so a dump of
 * idempotency_records must not hold it.
 */
export function idempotencyKeyDigest(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** One key of one organization, and the fingerprint of the request using it. */
export interface IdempotencyScope {
  orgId: string;
  /** The key as the client sent it: kept in memory only (it derives the sealing key). */
  key: string;
  /** idempotencyKeyDigest(key): the record's key in the store. */
  keyDigest: string;
  fingerprint: string;
  /**
   * Who sends the request (`user:usr_…` for a session, `key:key_…` for an API key). An answer
   * holding a secret (IdempotentOptions.seal) replays only to this caller: it is part of that
   * record's fingerprint (callerBound), so another user or key of the organization repeating
   * the key gets 409 idempotency_conflict.
   */
  caller?: string;
  /**
   * Set by keyedScope(): the unkeyed fingerprint (callerBound too when the record is), which
   * records stored before fingerprints were keyed hold; they compare for the 24 hours they live.
   */
  legacyFingerprint?: string;
}

/** The key of stored fingerprints when IDEMPOTENCY_SECRET is unset (never in production, where it is required). */
export const DEVELOPMENT_FINGERPRINT_KEY = 'cloud-disk-service idempotency fingerprint, development only';

/**
 * The scope as stored: its fingerprint becomes the HMAC-SHA256 of the request's fingerprint keyed
 * with IDEMPOTENCY_SECRET, so a database dump cannot test guesses of a body (a secret variable,
 * user_data) against it; the unkeyed one stays in memory as legacyFingerprint.
 */
export function keyedScope(scope: IdempotencyScope, secret: string | undefined): IdempotencyScope {
  const fingerprint = createHmac('sha256', secret ?? DEVELOPMENT_FINGERPRINT_KEY).update(`cds idempotency fingerprint v2\n${scope.fingerprint}`).digest('hex');
  return { ...scope, fingerprint, legacyFingerprint: scope.fingerprint };
}

/** The scope whose fingerprint also names the caller: a record made with it matches only that caller. */
export function callerBound(scope: IdempotencyScope): IdempotencyScope {
  if (!scope.caller) throw new Error('An answer holding a secret needs the caller in its idempotency scope');
  const bind = (fingerprint: string): string => createHash('sha256').update(`${fingerprint}\ncaller ${scope.caller}`).digest('hex');
  return { ...scope, fingerprint: bind(scope.fingerprint), legacyFingerprint: scope.legacyFingerprint === undefined ? undefined : bind(scope.legacyFingerprint) };
}
