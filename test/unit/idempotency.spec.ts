import { IdempotentExecution } from '../../src/modules/idempotency/application/idempotent-execution';
import { PurgeExpiredIdempotencyRecords } from '../../src/modules/idempotency/application/purge-expired-records.use-case';
import {
  IDEMPOTENCY_RETENTION_MS,
  StoredResponse,
  canonicalJson,
  isValidIdempotencyKey,
  requestFingerprint,
} from '../../src/modules/idempotency/domain/idempotency';
import { InMemoryIdempotencyStore } from '../../src/modules/idempotency/testing/in-memory-idempotency.store';
import { InMemoryUnitOfWork } from '../../src/shared/database/in-memory-unit-of-work';
import { FixedClock } from '../../src/shared/kernel/clock/clock';
import { DomainError } from '../../src/shared/kernel/errors/domain-error';

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
  const scope = { orgId: 'org_1', key: 'k1', fingerprint: 'f1' };
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
    await expect(run.run({ ...scope, key: 'k2' }, () => Promise.reject(boom), storable)).rejects.toBe(boom);
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
