/**
 * How long a credential read from the database may be used again without reading it anew,
 * counted from the moment the read began. decisions.md: a revocation takes effect within 1 second
 * on every server process, and a credential cache lives at most that long.
 */
export const CREDENTIAL_CACHE_TTL_MS = 1_000;
/** At most this many tokens are kept; beyond it the oldest entries go first. */
const MAX_ENTRIES = 10_000;
/**
 * How long a digest that matched no credential is answered "unknown" without a query. Tokens are
 * random (at least 128 bits), so a digest unknown now is never a token created within this time,
 * short of a guess.
 */
export const UNKNOWN_TOKEN_CACHE_TTL_MS = 5_000;
/** At most this many unknown digests are kept; beyond it the oldest go first. */
const MAX_UNKNOWN = 10_000;

interface Entry<T> {
  until: number;
  id: string | undefined;
  value: Promise<T | undefined>;
}

/**
 * Per-process cache of API key and session records by token digest, so that at steady state a
 * request authenticates without a database round trip; concurrent lookups of one token share one
 * query. Digests that matched nothing are kept apart, for UNKNOWN_TOKEN_CACHE_TTL_MS and at most
 * MAX_UNKNOWN of them, so a repeated unknown token costs no query while unknown tokens cannot fill
 * memory. A revocation through this process (logout, API key revocation) evicts the entry at once;
 * another process sees it within CREDENTIAL_CACHE_TTL_MS. Time is monotonic (performance.now), so
 * a test clock never stretches the lifetime.
 */
export class CredentialCache {
  private readonly entries = new Map<string, Entry<unknown>>();
  private readonly byId = new Map<string, string>();
  /** Digests that matched no credential, and until when (monotonic ms) they are answered so. */
  private readonly unknown = new Map<string, number>();

  constructor(
    private readonly ttlMs: number = CREDENTIAL_CACHE_TTL_MS,
    private readonly unknownTtlMs: number = UNKNOWN_TOKEN_CACHE_TTL_MS,
  ) {}

  /** The cached record of this digest, or `load()`'s (kept when found, for ttlMs from now). */
  get<T extends { id: string }>(digest: Buffer, load: () => Promise<T | undefined>): Promise<T | undefined> {
    const key = digest.toString('base64');
    const now = performance.now();
    const cached = this.entries.get(key) as Entry<T> | undefined;
    if (cached && cached.until > now) return cached.value;
    if (cached) this.delete(key);
    const unknownUntil = this.unknown.get(key);
    if (unknownUntil !== undefined) {
      if (unknownUntil > now) return Promise.resolve(undefined);
      this.unknown.delete(key);
    }

    const entry: Entry<T> = { until: now + this.ttlMs, id: undefined, value: load() };
    if (this.entries.size >= MAX_ENTRIES) this.delete(this.entries.keys().next().value as string);
    this.entries.set(key, entry);
    entry.value.then(
      (found) => {
        if (this.entries.get(key) !== entry) return;
        if (found === undefined) {
          this.delete(key);
          this.rememberUnknown(key, now + this.unknownTtlMs);
        } else {
          entry.id = found.id;
          this.byId.set(found.id, key);
        }
      },
      () => this.entries.get(key) === entry && this.delete(key),
    );
    return entry.value;
  }

  /** Forgets the credential with this id (called once its revocation has committed). */
  evict(id: string): void {
    const key = this.byId.get(id);
    if (key !== undefined) this.delete(key);
  }

  private rememberUnknown(key: string, until: number): void {
    if (this.unknownTtlMs <= 0) return;
    if (this.unknown.size >= MAX_UNKNOWN) this.unknown.delete(this.unknown.keys().next().value as string);
    this.unknown.set(key, until);
  }

  private delete(key: string): void {
    const entry = this.entries.get(key);
    this.entries.delete(key);
    if (entry?.id !== undefined && this.byId.get(entry.id) === key) this.byId.delete(entry.id);
  }
}
