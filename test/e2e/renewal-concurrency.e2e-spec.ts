import { idempotencyKeyDigest } from '../../src/modules/idempotency/domain/idempotency';
import { AdvanceOperations } from '../../src/modules/operations/application/advance-operations.use-case';
import { usingPostgres } from '../support/database';
import { apiToken, bearer, orgWithDetachedVolumes, region } from '../support/fixtures';
import { TestApp, startTestApp } from '../support/test-app';
import { expectInvariantsHold } from '../support/verify';

/**
 * Concurrency proves something only on PostgreSQL: the embedded engine (PGlite) runs one
 * transaction at a time, so nothing would ever race there.
 */
const describeOnPostgres = usingPostgres() ? describe : describe.skip;
if (!usingPostgres()) {
  console.log('renewal-concurrency.e2e-spec: skipped, needs DATABASE_URL (PostgreSQL); the embedded engine serialises transactions');
}

/** Detached 100 GB volumes at 0.02 USD per GB-month: 2.00000 USD a month each. */
const org = (suffix: string, n: number, wallet: Record<string, string>) =>
  orgWithDetachedVolumes(suffix, n, wallet, { expires_at: '2030-01-31T00:00:00.000Z' });

describeOnPostgres('renewal under concurrency (PostgreSQL)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ dbPoolSize: 20 });
    await t.seed({
      regions: [region()],
      organizations: [org('dup', 2, { USD: '100.00000' }), org('two', 10, { USD: '5.00000' }), org('same', 1, { USD: '100.00000' })],
    });
  });
  afterAll(async () => t?.close());

  const renew = (suffix: string, volume: string, body: object, key?: string) => {
    const req = t.http.post(`/v1/volumes/${volume}/renew`).set(bearer(apiToken(suffix, 'rw')));
    if (key) req.set('Idempotency-Key', key);
    return req.send(body);
  };
  const balance = async (orgId: string) =>
    (await t.sql(`SELECT available::text AS available, reserved::text AS reserved FROM wallet_balances WHERE org_id = $1 AND currency = 'USD'`, [orgId]))[0];

  it('20 concurrent identical requests with one key: one operation, one hold, twenty identical 202s', async () => {
    const responses = await Promise.all(Array.from({ length: 20 }, () => renew('dup', 'vol_dupv1', { term_months: 1 }, 'same-key')));
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(202));
    const texts = new Set(responses.map((r) => r.text));
    expect(texts.size).toBe(1);
    expect(responses.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(19);
    expect(new Set(responses.map((r) => r.headers.location)).size).toBe(1);

    const ops = await t.sql(`SELECT id FROM operations WHERE org_id = 'org_dup'`);
    expect(ops).toEqual([{ id: responses[0].body.operation.id }]);
    expect(await t.sql(`SELECT kind, amount::text AS amount FROM wallet_ledger WHERE org_id = 'org_dup' AND kind <> 'credit'`)).toEqual([
      { kind: 'hold', amount: '200000' },
    ]);
    expect(await balance('org_dup')).toEqual({ available: '9800000', reserved: '200000' });
    expect(await t.sql(`SELECT key_sha256 FROM idempotency_records WHERE org_id = 'org_dup'`)).toEqual([{ key_sha256: idempotencyKeyDigest('same-key') }]);
  });

  it('one key sent concurrently with two different bodies: one body wins (202s), the other gets 409 idempotency_conflict', async () => {
    const bodies = Array.from({ length: 20 }, (_, i) => ({ term_months: i % 2 === 0 ? 3 : 12 }));
    const responses = await Promise.all(bodies.map((b) => renew('dup', 'vol_dupv2', b, 'contested')));
    const winner = responses.find((r) => r.status === 202)!;
    const winningTerm = bodies[responses.indexOf(winner)].term_months;
    responses.forEach((r, i) => {
      if (bodies[i].term_months === winningTerm) {
        expect(r.status).toBe(202);
        expect(r.text).toBe(winner.text);
      } else {
        expect(r.status).toBe(409);
        expect(r.body.error.code).toBe('idempotency_conflict');
      }
    });
    expect(await t.sql(`SELECT count(*)::int AS n FROM operations WHERE volume_id = 'vol_dupv2'`)).toEqual([{ n: 1 }]);
  });

  it('a wallet covering exactly two renewals, ten concurrent renewals of ten volumes: two 202s, eight 402s, the exact remainder', async () => {
    const responses = await Promise.all(Array.from({ length: 10 }, (_, i) => renew('two', `vol_twov${i + 1}`, { term_months: 1 })));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([202, 202, 402, 402, 402, 402, 402, 402, 402, 402]);
    for (const r of responses.filter((x) => x.status === 402)) {
      // Refused only once both holds had committed: 5 - 2 - 2 = 1.
      expect(r.body.error.details).toEqual({ required: '2.00000', available: '1.00000', currency: 'USD' });
    }
    expect(await balance('org_two')).toEqual({ available: '100000', reserved: '400000' });
    expect(await t.sql(`SELECT count(*)::int AS n FROM operations WHERE org_id = 'org_two'`)).toEqual([{ n: 2 }]);
    expect(await t.sql(`SELECT count(*)::int AS n FROM wallet_ledger WHERE org_id = 'org_two' AND kind = 'hold'`)).toEqual([{ n: 2 }]);

    await t.app.get(AdvanceOperations).runUntilIdle();
    expect(await balance('org_two')).toEqual({ available: '100000', reserved: '0' });
    expect(await t.sql(`SELECT count(*)::int AS n FROM wallet_ledger WHERE org_id = 'org_two' AND kind = 'capture'`)).toEqual([{ n: 2 }]);
  });

  it('ten concurrent renewals of one volume without a key: one 202, nine 409 invalid_state, one hold', async () => {
    const responses = await Promise.all(Array.from({ length: 10 }, () => renew('same', 'vol_samev1', { term_months: 1 })));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([202, 409, 409, 409, 409, 409, 409, 409, 409, 409]);
    for (const r of responses.filter((x) => x.status === 409)) expect(r.body.error.code).toBe('invalid_state');
    expect(await balance('org_same')).toEqual({ available: '9800000', reserved: '200000' });
  });

  it('at the end, `verify` finds every invariant holding (operations still pending included)', () => {
    expectInvariantsHold(t.settings.databaseUrl);
  });
});
