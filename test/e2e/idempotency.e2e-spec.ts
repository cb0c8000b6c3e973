import { idempotencyKeyDigest, requestFingerprint } from '../../src/modules/idempotency/domain/idempotency';
import { PurgeExpiredIdempotencyRecords } from '../../src/modules/idempotency/application/purge-expired-records.use-case';
import { AdvanceOperations } from '../../src/modules/operations/application/advance-operations.use-case';
import { FixedClock } from '../../src/shared/kernel/clock/clock';
import { apiToken, bearer, orgWithDetachedVolumes, region } from '../support/fixtures';
import { TestApp, startTestApp } from '../support/test-app';

const NOW = new Date('2026-11-22T10:00:00.000Z');
const DAY_MS = 24 * 60 * 60 * 1000;

const org = orgWithDetachedVolumes;

describe('Idempotency-Key on POST /v1/volumes/{id}/renew', () => {
  let t: TestApp;
  const clock = new FixedClock(NOW);

  beforeAll(async () => {
    t = await startTestApp({}, clock);
    await t.seed({ regions: [region()], organizations: [org('idem', 8), org('other', 1), org('poor', 1, { USD: '1.00000' })] });
  });
  afterAll(async () => t?.close());
  afterEach(() => clock.set(NOW));

  const renew = (suffix: string, volume: string, body: unknown, key?: string) => {
    const req = t.http.post(`/v1/volumes/${volume}/renew`).set(bearer(apiToken(suffix, 'rw')));
    if (key !== undefined) req.set('Idempotency-Key', key);
    return req.send(body as object);
  };
  const count = async (sql: string, params: unknown[] = []) => Number((await t.sql<{ n: string }>(sql, params))[0].n);
  const holdsOf = (volumeId: string) =>
    count(`SELECT count(*) AS n FROM wallet_ledger l JOIN operations o ON o.id = l.operation_id WHERE o.volume_id = $1 AND l.kind = 'hold'`, [volumeId]);

  it('replays the first response to the byte, with Idempotent-Replayed, the same Location and a new X-Request-Id; charges once', async () => {
    const first = await renew('idem', 'vol_idemv1', { term_months: 1, currency: 'USD' }, 'key-1').set('X-Request-Id', 'first-request');
    expect(first.status).toBe(202);
    expect(first.headers['idempotent-replayed']).toBeUndefined();

    // Same body with members in another order: same fingerprint.
    const again = await t.http
      .post('/v1/volumes/vol_idemv1/renew')
      .set(bearer(apiToken('idem', 'rw')))
      .set('Idempotency-Key', 'key-1')
      .set('X-Request-Id', 'second-request')
      .set('Content-Type', 'application/json')
      .send('{ "currency": "USD",\n  "term_months": 1 }');
    expect(again.status).toBe(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['content-type']).toMatch(/^application\/json/);
    expect(again.headers.location).toBe(first.headers.location);
    expect(again.headers['x-request-id']).toBe('second-request');
    expect(again.text).toBe(first.text);

    // Still the original answer after the operation has ended, and nothing charged again.
    await t.app.get(AdvanceOperations).runUntilIdle();
    const later = await renew('idem', 'vol_idemv1', { term_months: 1, currency: 'USD' }, 'key-1');
    expect(later.status).toBe(202);
    expect(later.text).toBe(first.text);
    expect(later.body.operation.status).toBe('pending');
    expect(await count(`SELECT count(*) AS n FROM operations WHERE volume_id = 'vol_idemv1'`)).toBe(1);
    expect(await holdsOf('vol_idemv1')).toBe(1);
    expect(await t.sql(`SELECT kind, amount::text AS amount FROM wallet_ledger WHERE org_id = 'org_idem' AND kind <> 'credit' ORDER BY id`)).toEqual([
      { kind: 'hold', amount: '200000' },
      { kind: 'capture', amount: '200000' },
    ]);
  });

  it('answers 409 idempotency_conflict for the same key with another body or another path; nothing written', async () => {
    const ops = await count(`SELECT count(*) AS n FROM operations WHERE org_id = 'org_idem'`);
    const otherBody = await renew('idem', 'vol_idemv1', { term_months: 3, currency: 'USD' }, 'key-1');
    expect(otherBody.status).toBe(409);
    expect(otherBody.body).toEqual({
      error: {
        code: 'idempotency_conflict',
        message: 'This Idempotency-Key was already used with a different request; use a new key for a new request',
        request_id: otherBody.headers['x-request-id'],
        details: {},
      },
    });
    expect(otherBody.headers['idempotent-replayed']).toBeUndefined();
    const otherPath = await renew('idem', 'vol_idemv2', { term_months: 1, currency: 'USD' }, 'key-1');
    expect(otherPath.status).toBe(409);
    expect(otherPath.body.error.code).toBe('idempotency_conflict');
    // An unknown member is refused (400, before the key is looked at).
    const extraMember = await renew('idem', 'vol_idemv1', { term_months: 1, currency: 'USD', note: 'x' }, 'key-1');
    expect(extraMember.status).toBe(400);
    expect(extraMember.body.error.details).toEqual({ field: 'note' });
    expect(await count(`SELECT count(*) AS n FROM operations WHERE org_id = 'org_idem'`)).toBe(ops);
  });

  it('fingerprints the path as routing matches it: another case, a trailing slash or %-encoded characters replay instead of 409', async () => {
    const body = { term_months: 1 };
    const first = await t.http.post('/v1/volumes/vol_idemv7/renew').set(bearer(apiToken('idem', 'rw'))).set('Idempotency-Key', 'path-key').send(body);
    expect(first.status).toBe(202);
    for (const path of ['/V1/VOLUMES/vol_idemv7/RENEW', '/v1/volumes/vol_idemv7/renew/', '/v1/volumes/vol%5Fidemv7/renew', '/v1/Volumes/%76ol_idemv7/Renew/']) {
      const again = await t.http.post(path).set(bearer(apiToken('idem', 'rw'))).set('Idempotency-Key', 'path-key').send(body);
      expect({ path, status: again.status, replayed: again.headers['idempotent-replayed'] }).toEqual({ path, status: 202, replayed: 'true' });
      expect(again.text).toBe(first.text);
      expect(again.headers.location).toBe(first.headers.location);
    }
    expect(await count(`SELECT count(*) AS n FROM operations WHERE volume_id = 'vol_idemv7'`)).toBe(1);
    expect(await holdsOf('vol_idemv7')).toBe(1);
    // The id is still part of the path: another volume with the same key is another request.
    const other = await t.http.post('/v1/volumes/VOL_IDEMV7/renew').set(bearer(apiToken('idem', 'rw'))).set('Idempotency-Key', 'path-key').send(body);
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('idempotency_conflict');
  });

  it('scopes keys to the organization: another organization never gets a replay of this one\'s answer', async () => {
    // The very request org_idem sent with key-1 (same method, path and body): for org_other it is
    // a new request, about a volume it cannot see.
    const same = await renew('other', 'vol_idemv1', { term_months: 1, currency: 'USD' }, 'key-1');
    expect(same.status).toBe(404);
    expect(same.headers['idempotent-replayed']).toBeUndefined();
    expect(same.body).toEqual({
      error: { code: 'not_found', message: 'Volume vol_idemv1 not found', request_id: same.headers['x-request-id'], details: {} },
    });
    const own = await renew('other', 'vol_otherv1', { term_months: 1, currency: 'USD' }, 'key-2');
    expect(own.status).toBe(202);
    expect(own.headers['idempotent-replayed']).toBeUndefined();
    expect(own.body.volume.id).toBe('vol_otherv1');
    const [k1, k2] = [idempotencyKeyDigest('key-1'), idempotencyKeyDigest('key-2')];
    expect(await t.sql(`SELECT org_id, key_sha256, status_code FROM idempotency_records WHERE key_sha256 IN ($1, $2) ORDER BY org_id, status_code`, [k1, k2])).toEqual([
      { org_id: 'org_idem', key_sha256: k1, status_code: 202 },
      { org_id: 'org_other', key_sha256: k2, status_code: 202 },
      { org_id: 'org_other', key_sha256: k1, status_code: 404 },
    ]);
    expect(await t.sql(`SELECT kind, amount::text AS amount, operation_id FROM wallet_ledger WHERE org_id = 'org_other' AND kind <> 'credit'`)).toEqual([
      { kind: 'hold', amount: '200000', operation_id: own.body.operation.id },
    ]);
  });

  it('accepts a key of exactly 255 printable ASCII characters and replays it', async () => {
    const key = `${'~ '.repeat(127)}k`;
    expect(key).toHaveLength(255);
    const first = await renew('other', 'vol_otherv1', { term_months: 3 }, key);
    expect(first.status).toBe(409); // vol_otherv1 still has its pending renewal: a stored answer too
    const again = await renew('other', 'vol_otherv1', { term_months: 3 }, key);
    expect(again.status).toBe(409);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.text).toBe(first.text);
    // Stored by its SHA-256 only: no column holds the key itself.
    const rows = await t.sql(`SELECT * FROM idempotency_records WHERE org_id = 'org_other' AND key_sha256 = $1`, [idempotencyKeyDigest(key)]);
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain('~ ~ ~');
  });

  it('stores and replays 402, 404 and 409 invalid_state answers with their original request_id', async () => {
    const poor = await renew('poor', 'vol_poorv1', { term_months: 1 }, 'poor-1');
    expect(poor.status).toBe(402);
    expect(poor.body.error.details).toEqual({ required: '2.00000', available: '1.00000', currency: 'USD' });
    await t.sql(`UPDATE wallet_balances SET available = 100000000 WHERE org_id = 'org_poor' AND currency = 'USD'`);
    const replay = await renew('poor', 'vol_poorv1', { term_months: 1 }, 'poor-1');
    expect(replay.status).toBe(402);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.text).toBe(poor.text);
    expect(replay.body.error.request_id).toBe(poor.headers['x-request-id']);
    expect(replay.headers['x-request-id']).not.toBe(poor.headers['x-request-id']);
    // A new key is a new request: the wallet now covers it.
    expect((await renew('poor', 'vol_poorv1', { term_months: 1 }, 'poor-2')).status).toBe(202);

    const missing = await renew('idem', 'vol_nope', { term_months: 1 }, 'missing-1');
    expect(missing.status).toBe(404);
    const missingAgain = await renew('idem', 'vol_nope', { term_months: 1 }, 'missing-1');
    expect(missingAgain.status).toBe(404);
    expect(missingAgain.headers['idempotent-replayed']).toBe('true');
    expect(missingAgain.text).toBe(missing.text);

    expect((await renew('idem', 'vol_idemv3', { term_months: 1 }, 'busy-0')).status).toBe(202);
    const busy = await renew('idem', 'vol_idemv3', { term_months: 1 }, 'busy-1');
    expect(busy.status).toBe(409);
    expect(busy.body.error.code).toBe('invalid_state');
    await t.app.get(AdvanceOperations).runUntilIdle();
    const busyAgain = await renew('idem', 'vol_idemv3', { term_months: 1 }, 'busy-1');
    expect(busyAgain.status).toBe(409);
    expect(busyAgain.text).toBe(busy.text);
    expect(await holdsOf('vol_idemv3')).toBe(1);
  });

  it('stores nothing for a 400: the key stays free', async () => {
    const bad = await renew('idem', 'vol_idemv4', { term_months: 5 }, 'after-400');
    expect(bad.status).toBe(400);
    expect(await t.sql(`SELECT 1 FROM idempotency_records WHERE key_sha256 = $1`, [idempotencyKeyDigest('after-400')])).toEqual([]);
    const good = await renew('idem', 'vol_idemv4', { term_months: 1 }, 'after-400');
    expect(good.status).toBe(202);
    expect(good.headers['idempotent-replayed']).toBeUndefined();
  });

  it('stores nothing for a 500: the failed transaction leaves no record, operation or hold, and a retry executes', async () => {
    const holdsBefore = await count(`SELECT count(*) AS n FROM wallet_ledger WHERE org_id = 'org_idem' AND kind = 'hold'`);
    await t.sql('ALTER TABLE audit_log RENAME TO audit_log_gone');
    let failed;
    try {
      failed = await renew('idem', 'vol_idemv5', { term_months: 1 }, 'after-500');
    } finally {
      await t.sql('ALTER TABLE audit_log_gone RENAME TO audit_log');
    }
    expect(failed.status).toBe(500);
    expect(failed.body.error.code).toBe('internal');
    expect(await t.sql(`SELECT 1 FROM idempotency_records WHERE key_sha256 = $1`, [idempotencyKeyDigest('after-500')])).toEqual([]);
    expect(await t.sql(`SELECT id FROM operations WHERE volume_id = 'vol_idemv5'`)).toEqual([]);
    expect(await count(`SELECT count(*) AS n FROM wallet_ledger WHERE org_id = 'org_idem' AND kind = 'hold'`)).toBe(holdsBefore);
    const retry = await renew('idem', 'vol_idemv5', { term_months: 1 }, 'after-500');
    expect(retry.status).toBe(202);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
  });

  it('stores the fingerprint keyed with the server secret: the unkeyed hash of the request matches no record; a record stored unkeyed still compares', async () => {
    const body = { term_months: 1, currency: 'USD' };
    const first = await renew('idem', 'vol_idemv8', body, 'keyed-fingerprint');
    expect(first.status).toBe(202);
    const [record] = await t.sql<{ fingerprint: string }>(`SELECT fingerprint FROM idempotency_records WHERE org_id = 'org_idem' AND key_sha256 = $1`, [idempotencyKeyDigest('keyed-fingerprint')]);
    // Who reads the database recomputes the plain SHA-256 of a guessed request: no record holds it.
    const unkeyed = requestFingerprint('POST', '/v1/volumes/vol_idemv8/renew', body);
    expect(record.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(record.fingerprint).not.toBe(unkeyed);
    expect(await count(`SELECT count(*) AS n FROM idempotency_records WHERE fingerprint = $1`, [unkeyed])).toBe(0);

    // A record stored before fingerprints were keyed (the unkeyed hash) replays for the 24 hours it lives, and still refuses another body.
    await t.sql(`UPDATE idempotency_records SET fingerprint = $1 WHERE org_id = 'org_idem' AND key_sha256 = $2`, [unkeyed, idempotencyKeyDigest('keyed-fingerprint')]);
    const again = await renew('idem', 'vol_idemv8', body, 'keyed-fingerprint');
    expect(again.status).toBe(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.text).toBe(first.text);
    const other = await renew('idem', 'vol_idemv8', { term_months: 3, currency: 'USD' }, 'keyed-fingerprint');
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('idempotency_conflict');
    expect(await holdsOf('vol_idemv8')).toBe(1);
  });

  it('forgets a key after 24 hours (treated as absent, then purged by the job)', async () => {
    await t.app.get(AdvanceOperations).runUntilIdle();
    const first = await renew('idem', 'vol_idemv6', { term_months: 1 }, 'day-old');
    expect(first.status).toBe(202);
    await t.app.get(AdvanceOperations).runUntilIdle();

    clock.set(new Date(NOW.getTime() + DAY_MS - 1));
    const within = await renew('idem', 'vol_idemv6', { term_months: 1 }, 'day-old');
    expect(within.headers['idempotent-replayed']).toBe('true');
    expect(within.text).toBe(first.text);

    clock.set(new Date(NOW.getTime() + DAY_MS));
    const expired = await renew('idem', 'vol_idemv6', { term_months: 1 }, 'day-old');
    expect(expired.status).toBe(202);
    expect(expired.headers['idempotent-replayed']).toBeUndefined();
    expect(expired.body.operation.id).not.toBe(first.body.operation.id);
    expect(await holdsOf('vol_idemv6')).toBe(2);

    // Every record but 'day-old' (renewed just now) is 24 hours old now: the purge deletes them.
    const live = await count(`SELECT count(*) AS n FROM idempotency_records WHERE expires_at > $1`, [clock.now()]);
    const total = await count(`SELECT count(*) AS n FROM idempotency_records`);
    expect(live).toBe(1);
    expect(total).toBeGreaterThan(5);
    expect(await t.app.get(PurgeExpiredIdempotencyRecords).execute()).toBe(total - 1);
    expect(await t.sql(`SELECT org_id, key_sha256 FROM idempotency_records`)).toEqual([{ org_id: 'org_idem', key_sha256: idempotencyKeyDigest('day-old') }]);
  });
});
