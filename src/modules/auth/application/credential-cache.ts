/**
 * How long a credential read from the database may be used again without reading it anew,
 * counted from the moment the read began. decisions.md: a revocation takes effect within 1 second
 * on every server process, and a credential cache lives at most that long.
 */
export const CREDENTIAL_CACHE_TTL_MS = 1_000;
/** At most this many tokens are kept; beyond it the oldest entries go first. */
const MAX_ENTRIES = 10_000;

interface Entry<T> {
  until: number;
  id: string | undefined;
  value: Promise<T | undefined>;
}

/**
 * Per-process cache of API key and session records by token digest, so that at steady state a
 * request authenticates without a database round trip. Only tokens that exist are kept (a new key
 * works at once, and unknown tokens cannot fill memory); concurrent lookups of one token share one
 * query. A revocation through this process (logout, API key revocation) evicts the entry at once;
 * another process sees it within CREDENTIAL_CACHE_TTL_MS. Time is monotonic (performance.now), so
 * a test clock never stretches the lifetime.
 */
export class CredentialCache {
  private readonly entries = new Map<string, Entry<unknown>>();
  private readonly byId = new Map<string, string>();

  constructor(private readonly ttlMs: number = CREDENTIAL_CACHE_TTL_MS) {}

  /** The cached record of this digest, or `load()`'s (kept when found, for ttlMs from now). */
  get<T extends { id: string }>(digest: Buffer, load: () => Promise<T | undefined>): Promise<T | undefined> {
    const key = digest.toString('base64');
    const now = performance.now();
    const cached = this.entries.get(key) as Entry<T> | undefined;
    if (cached && cached.until > now) return cached.value;
    if (cached) this.delete(key);

    const entry: Entry<T> = { until: now + this.ttlMs, id: undefined, value: load() };
    if (this.entries.size >= MAX_ENTRIES) this.delete(this.entries.keys().next().value as string);
    this.entries.set(key, entry);
    entry.value.then(
      (found) => {
        if (this.entries.get(key) !== entry) return;
        if (found === undefined) this.delete(key);
        else {
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

  private delete(key: string): void {
    const entry = this.entries.get(key);
    this.entries.delete(key);
    if (entry?.id !== undefined && this.byId.get(entry.id) === key) this.byId.delete(entry.id);
  }
}
