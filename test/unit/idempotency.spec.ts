import { createHash } from 'node:crypto';
import { IdempotentExecution } from '../../src/modules/idempotency/application/idempotent-execution';
import { PurgeExpiredIdempotencyRecords } from '../../src/modules/idempotency/application/purge-expired-records.use-case';
import {
  IDEMPOTENCY_RETENTION_MS,
  StoredResponse,
  IdempotencyScope,
  canonicalJson,
  idempotencyKeyDigest,
  isValidIdempotencyKey,
  keyedScope,
  requestFingerprint,
} from '../../src/modules/idempotency/domain/idempotency';
import { isSealed, openBody, sealBody } from '../../src/modules/idempotency/domain/sealed-response';
import { InMemoryIdempotencyStore } from '../../src/modules/idempotency/testing/in-memory-idempotency.store';
import { InMemoryUnitOfWork } from '../../src/shared/database/in-memory-unit-of-work';
import { FixedClock } from '../../src/shared/kernel/clock/clock';
import { DomainError } from '../../src/shared/kernel/errors/domain-error';
import type { Settings } from '../../src/shared/config/settings';

const scopeOf = (orgId: string, key: string, fingerprint: string): IdempotencyScope => ({ orgId, key, keyDigest: idempotencyKeyDigest(key), fingerprint });
/** The fingerprint a record holds for the request fingerprint f (no IDEMPOTENCY_SECRET: the development key). */
const stored = (f: string): string => keyedScope(scopeOf('org_1', 'k', f), undefined).fingerprint;

describe('Idempotency-Key rules', () => {
  it('accepts 1 to 255 printable ASCII characters', () => {
    expect(isValidIdempotencyKey('a')).toBe(true);
    expect(isValidIdempotencyKey(' ~!"#$%&\'()*+,-./0123456789:;<=>?@[\\]^_`{|}')).toBe(true);
    expect(isValidIdempotencyKey('k'.repeat(255))).toBe(true);
    expect(isValidIdempotencyKey('')).toBe(false);
    expect(isValidIdempotencyKey('k'.repeat(256))).toBe(false);
    expect(isValidIdempotencyKey('tab\t')).toBe(false);
    expect(isValidIdempotencyKey('del\x7f')).toBe(false);
    expect(isValidIdempotencyKey('café')).toBe(false);
  });

  it('canonical JSON sorts keys at every depth and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}');
    expect(canonicalJson({ a: undefined, b: 'x' })).toBe('{"b":"x"}');
    expect(canonicalJson(undefined)).toBe('null');
  });

  it('fingerprints method, path and body: equal for reordered members, different otherwise', () => {
    const f = requestFingerprint('POST', '/v1/volumes/vol_1/renew', { term_months: 1, currency: 'USD' });
    expect(f).toMatch(/^[0-9a-f]{64}$/);
    expect(requestFingerprint('post', '/v1/volumes/vol_1/renew', { currency: 'USD', term_months: 1 })).toBe(f);
    expect(requestFingerprint('POST', '/v1/volumes/vol_2/renew', { term_months: 1, currency: 'USD' })).not.toBe(f);
    expect(requestFingerprint('PUT', '/v1/volumes/vol_1/renew', { term_months: 1, currency: 'USD' })).not.toBe(f);
    expect(requestFingerprint('POST', '/v1/volumes/vol_1/renew', { term_months: 3, currency: 'USD' })).not.toBe(f);
    expect(requestFingerprint('POST', '/v1/volumes/vol_1/renew', { term_months: '1', currency: 'USD' })).not.toBe(f);
  });
});

describe('IdempotentExecution (in memory)', () => {
  const NOW = new Date('2026-11-22T10:00:00.000Z');
  let clock: FixedClock;
  let store: InMemoryIdempotencyStore;
  let run: IdempotentExecution;
  let calls: number;
  const scope = scopeOf('org_1', 'k1', 'f1');
  const ok: StoredResponse = { status: 202, body: '{"ok":true}', headers: { Location: '/v1/operations/op_1' } };
  const work = async () => {
    calls++;
    return ok;
  };
  const storable = (err: unknown) =>
    err instanceof DomainError && err.code === 'not_found' ? { status: 404, body: '{"error":"nf"}', headers: {} } : undefined;

  beforeEach(() => {
    clock = new FixedClock(NOW);
    store = new InMemoryIdempotencyStore();
    run = new IdempotentExecution(new InMemoryUnitOfWork(), store, clock);
    calls = 0;
  });

  it('without a key runs the work every time', async () => {
    expect(await run.run(undefined, work, storable)).toEqual({ response: ok, replayed: false });
    expect(await run.run(undefined, work, storable)).toEqual({ response: ok, replayed: false });
    expect(calls).toBe(2);
  });

  it('runs once per key and replays the stored response', async () => {
    expect(await run.run(scope, work, storable)).toEqual({ response: ok, replayed: false });
    expect(await run.run(scope, work, storable)).toEqual({ response: ok, replayed: true });
    expect(calls).toBe(1);
    // Keys are per organization.
    expect(await run.run({ ...scope, orgId: 'org_2' }, work, storable)).toEqual({ response: ok, replayed: false });
    expect(calls).toBe(2);
  });

  it('answers idempotency_conflict for the same key with another fingerprint', async () => {
    await run.run(scope, work, storable);
    await expect(run.run({ ...scope, fingerprint: 'f2' }, work, storable)).rejects.toMatchObject({ code: 'idempotency_conflict' });
    expect(calls).toBe(1);
  });

  it('stores a storable error as the response; rethrows any other', async () => {
    const notFound = async (): Promise<StoredResponse> => {
      calls++;
      throw new DomainError('not_found', 'nope');
    };
    expect(await run.run(scope, notFound, storable)).toEqual({ response: { status: 404, body: '{"error":"nf"}', headers: {} }, replayed: false });
    expect(await run.run(scope, notFound, storable)).toEqual({ response: { status: 404, body: '{"error":"nf"}', headers: {} }, replayed: true });
    expect(calls).toBe(1);
    const boom = new Error('db down');
    await expect(run.run(scopeOf('org_1', 'k2', 'f1'), () => Promise.reject(boom), storable)).rejects.toBe(boom);
  });

  it('treats a record as absent after 24 hours, and the purge deletes it', async () => {
    await run.run(scope, work, storable);
    clock.set(new Date(NOW.getTime() + IDEMPOTENCY_RETENTION_MS - 1));
    expect((await run.run(scope, work, storable)).replayed).toBe(true);
    expect(await new PurgeExpiredIdempotencyRecords(store, clock).execute()).toBe(0);
    clock.set(new Date(NOW.getTime() + IDEMPOTENCY_RETENTION_MS));
    expect(await new PurgeExpiredIdempotencyRecords(store, clock).execute()).toBe(1);
    expect(store.records.size).toBe(0);
    expect((await run.run(scope, work, storable)).replayed).toBe(false);
    expect(calls).toBe(2);
  });
});

describe('IdempotentExecution of an optimistic work (the work first, its answer stored with the key)', () => {
  const NOW = new Date('2026-11-22T10:00:00.000Z');
  const EXPIRES = new Date(NOW.getTime() + IDEMPOTENCY_RETENTION_MS);
  const scope = scopeOf('org_1', 'k1', 'f1');
  const ok: StoredResponse = { status: 202, body: '{"ok":true}', headers: { Location: '/v1/operations/op_1' } };
  const notFoundResponse: StoredResponse = { status: 404, body: '{"error":"nf"}', headers: {} };
  const storable = (err: unknown) => (err instanceof DomainError && err.code === 'not_found' ? notFoundResponse : undefined);

  /** A store whose store() fails once, as it does in a transaction a failed statement aborted. */
  class AbortedOnceStore extends InMemoryIdempotencyStore {
    failures = 1;
    async store(s: IdempotencyScope, now: Date, expiresAt: Date, response: StoredResponse): Promise<boolean> {
      if (this.failures-- > 0) throw new Error('current transaction is aborted, commands ignored until end of transaction block');
      return super.store(s, now, expiresAt, response);
    }
  }

  /** Rolls the store's records (and the work's effects) back when the transaction fails; counts savepoints. */
  class RollingBackUnitOfWork extends InMemoryUnitOfWork {
    savepoints = 0;
    effects: string[] = [];
    constructor(private readonly store: InMemoryIdempotencyStore) {
      super();
    }
    async run<T>(work: () => Promise<T>): Promise<T> {
      const records = new Map([...this.store.records].map(([k, r]) => [k, { ...r }]));
      const effects = [...this.effects];
      try {
        return await work();
      } catch (err) {
        this.store.records.clear();
        for (const [k, r] of records) this.store.records.set(k, r);
        this.effects = effects;
        throw err;
      }
    }
    savepoint<T>(work: () => Promise<T>): Promise<T> {
      this.savepoints++;
      return work();
    }
  }

  const setUp = (store = new InMemoryIdempotencyStore()) => {
    const uow = new RollingBackUnitOfWork(store);
    return { store, uow, run: new IdempotentExecution(uow, store, new FixedClock(NOW)) };
  };

  it('runs the work once without a savepoint and stores its answer with the key; a repeat is rolled back and replayed', async () => {
    const { store, uow, run } = setUp();
    const work = async (): Promise<StoredResponse> => {
      uow.effects.push('renewed');
      return ok;
    };
    expect(await run.run(scope, work, storable, { optimistic: true })).toEqual({ response: ok, replayed: false });
    expect(await run.run(scope, work, storable, { optimistic: true })).toEqual({ response: ok, replayed: true });
    expect(uow.effects).toEqual(['renewed']);
    expect(uow.savepoints).toBe(0);
    expect([...store.records.values()]).toEqual([{ fingerprint: stored('f1'), response: ok, expiresAt: EXPIRES }]);
    await expect(run.run({ ...scope, fingerprint: 'f2' }, work, storable, { optimistic: true })).rejects.toMatchObject({ code: 'idempotency_conflict' });
    expect(uow.effects).toEqual(['renewed']);
  });

  it('stores a storable error as the answer; rethrows any other and keeps nothing', async () => {
    const { store, uow, run } = setUp();
    const notFound = () => Promise.reject(new DomainError('not_found', 'nope'));
    expect(await run.run(scope, notFound, storable, { optimistic: true })).toEqual({ response: notFoundResponse, replayed: false });
    expect(await run.run(scope, notFound, storable, { optimistic: true })).toEqual({ response: notFoundResponse, replayed: true });
    const boom = new Error('db down');
    await expect(run.run(scopeOf('org_1', 'k2', 'f1'), () => Promise.reject(boom), storable, { optimistic: true })).rejects.toBe(boom);
    expect([...store.records.values()]).toEqual([{ fingerprint: stored('f1'), response: notFoundResponse, expiresAt: EXPIRES }]);
    expect(uow.savepoints).toBe(0);
  });

  it('executes the request again the careful way (key first, work in a savepoint) when its answer could not be stored', async () => {
    const { store, uow, run } = setUp(new AbortedOnceStore());
    let calls = 0;
    const notFound = (): Promise<StoredResponse> => {
      calls++;
      uow.effects.push(`attempt ${calls}`);
      return Promise.reject(new DomainError('not_found', 'nope'));
    };
    expect(await run.run(scope, notFound, storable, { optimistic: true })).toEqual({ response: notFoundResponse, replayed: false });
    expect(calls).toBe(2);
    expect(uow.effects).toEqual(['attempt 2']);
    expect(uow.savepoints).toBe(1);
    expect([...store.records.values()]).toEqual([{ fingerprint: stored('f1'), response: notFoundResponse, expiresAt: EXPIRES }]);
  });
});

describe('sealed answers (an API key create: the token is never stored in clear)', () => {
  const SECRET = 's'.repeat(40);
  const body = JSON.stringify({ api_key: { id: 'key_1' }, token: 'cds_live_abcdefghijklmnopqrstuvwxyz0123456789ABCD' });
  const scope = scopeOf('org_1', 'retry-key-1', 'f1');

  it('the store keys records by the SHA-256 of the Idempotency-Key, never the key', () => {
    expect(idempotencyKeyDigest('retry-key-1')).toMatch(/^[0-9a-f]{64}$/);
    expect(idempotencyKeyDigest('retry-key-1')).not.toBe(idempotencyKeyDigest('retry-key-2'));
  });

  it('opens only with the same key, organization, fingerprint and secret', () => {
    const sealed = sealBody(body, scope, SECRET);
    expect(isSealed(sealed)).toBe(true);
    expect(sealed).not.toContain('cds_live_');
    expect(sealBody(body, scope, SECRET)).not.toBe(sealed); // a fresh IV each time
    expect(openBody(sealed, scope, SECRET)).toBe(body);
    expect(() => openBody(sealed, scopeOf('org_1', 'retry-key-2', 'f1'), SECRET)).toThrow();
    expect(() => openBody(sealed, scopeOf('org_2', 'retry-key-1', 'f1'), SECRET)).toThrow();
    expect(() => openBody(sealed, scopeOf('org_1', 'retry-key-1', 'f2'), SECRET)).toThrow();
    expect(() => openBody(sealed, scope, 't'.repeat(40))).toThrow();
    expect(() => openBody(sealed, scope, undefined)).toThrow();
    // A plain body is returned as is.
    expect(openBody(body, scope, SECRET)).toBe(body);
  });

  it('IdempotentExecution stores the sealed body and replays the clear one', async () => {
    const store = new InMemoryIdempotencyStore();
    const run = new IdempotentExecution(new InMemoryUnitOfWork(), store, new FixedClock(new Date('2026-11-22T10:00:00.000Z')), { idempotencySecret: SECRET } as Settings);
    let calls = 0;
    const work = async (): Promise<StoredResponse> => {
      calls++;
      return { status: 201, body, headers: {} };
    };
    const mine = { ...scope, caller: 'user:usr_1' };
    expect(await run.run(mine, work, () => undefined, { seal: true })).toEqual({ response: { status: 201, body, headers: {} }, replayed: false });
    const [record] = [...store.records.values()];
    expect(record.response?.status).toBe(201);
    expect(isSealed(record.response!.body)).toBe(true);
    expect(JSON.stringify([...store.records])).not.toContain('cds_live_');
    expect(JSON.stringify([...store.records])).not.toContain('retry-key-1');
    expect(await run.run(mine, work, () => undefined, { seal: true })).toEqual({ response: { status: 201, body, headers: {} }, replayed: true });
    expect(calls).toBe(1);
    // The secret replays only to its caller: another user or key of the organization with the same key is refused.
    for (const caller of ['user:usr_2', 'key:key_1']) {
      const refused = await run.run({ ...scope, caller }, work, () => undefined, { seal: true }).catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(DomainError);
      expect((refused as DomainError).code).toBe('idempotency_conflict');
    }
    // A sealed answer needs to know its caller.
    await expect(run.run(scope, work, () => undefined, { seal: true })).rejects.toThrow('An answer holding a secret needs the caller in its idempotency scope');
    expect(calls).toBe(1);
  });

  it('a sealed answer stored under the unkeyed fingerprint (before fingerprints were keyed) still replays to its caller, and only then', async () => {
    const store = new InMemoryIdempotencyStore();
    const run = new IdempotentExecution(new InMemoryUnitOfWork(), store, new FixedClock(new Date('2026-11-22T10:00:00.000Z')), { idempotencySecret: SECRET } as Settings);
    const work = async (): Promise<StoredResponse> => ({ status: 201, body, headers: {} });
    const mine = { ...scope, caller: 'user:usr_1' };
    await run.run(mine, work, () => undefined, { seal: true });
    const [[id, record]] = [...store.records];
    // The keyed fingerprint depends on the secret: another secret gives another one.
    expect(record.fingerprint).toBe(createHash('sha256').update(`${keyedScope(scope, SECRET).fingerprint}\ncaller user:usr_1`).digest('hex'));
    expect(keyedScope(scope, SECRET).fingerprint).not.toBe(keyedScope(scope, 't'.repeat(40)).fingerprint);
    // Rewrite the record as the previous version stored it: the unkeyed fingerprint, caller-bound, as associated data too.
    const legacyScope = { ...mine, fingerprint: createHash('sha256').update(`f1\ncaller user:usr_1`).digest('hex') };
    store.records.set(id, { ...record, fingerprint: legacyScope.fingerprint, response: { status: 201, body: sealBody(body, legacyScope, SECRET), headers: {} } });
    expect(await run.run(mine, work, () => undefined, { seal: true })).toEqual({ response: { status: 201, body, headers: {} }, replayed: true });
    await expect(run.run({ ...scope, caller: 'user:usr_2' }, work, () => undefined, { seal: true })).rejects.toMatchObject({ code: 'idempotency_conflict' });
  });
});
