import { scaled } from '../support/deadlines';
import { Client } from 'pg';
import { AdvanceOperations } from '../../src/modules/operations/application/advance-operations.use-case';
import { usingPostgres } from '../support/database';
import { apiToken, bearer, orgWithDetachedVolumes, region } from '../support/fixtures';
import { TestApp, startTestApp } from '../support/test-app';
import { expectInvariantsHold } from '../support/verify';

/**
 * Holds racing whatever raises a balance (a credit, a release) and each other on one wallet.
 *
 * The race: a statement's UPDATE computes the new row from the version its snapshot shows, and
 * PostgreSQL checks the CHECK constraints on that new row *before* it finds the row was updated
 * since (and re-evaluates on the latest version, EvalPlanQual). A hold computed as `available -
 * amount` from a snapshot taken before a credit committed was refused by
 * wallet_available_not_negative (a 500) although the locked, latest balance covered it. The
 * deterministic case: a credit's transaction holds the balance row while the renewal's statement
 * starts (its snapshot: the old balance, too low) and commits while the renewal waits for the row.
 * PostgreSQL only: the embedded engine runs one transaction at a time.
 */
const describeOnPostgres = usingPostgres() ? describe : describe.skip;
if (!usingPostgres()) {
  console.log('renewal-wallet-race.e2e-spec: skipped, needs DATABASE_URL (PostgreSQL); the embedded engine serialises transactions');
}

const ORGS = 6;
const VOLUMES = 12;
const PURCHASES = 4;
/** 100 GB premium for a month: 2.00000 USD, a renewal and a purchase alike; 11.00000 covers five. */
const WALLET = '11.00000';
const COVERED = 5;

describeOnPostgres('renewal acceptance racing purchases on one wallet (PostgreSQL)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ dbPoolSize: 40 });
    await t.seed({
      regions: [region('id-jkt', { capacity_gb: 200000 })],
      organizations: [
        orgWithDetachedVolumes('edge', 1, { USD: '1.00000' }, { expires_at: '2030-01-31T00:00:00.000Z' }),
        ...Array.from({ length: ORGS }, (_, i) => orgWithDetachedVolumes(`race${i}`, VOLUMES, { USD: WALLET }, { expires_at: '2030-01-31T00:00:00.000Z' })),
      ],
    });
  });
  afterAll(async () => t?.close());

  /** Credits `minor` USD to `orgId` in a transaction left open (the balance row locked, as the credit use case writes it); commit() ends it. */
  const openCredit = async (orgId: string, minor: bigint): Promise<{ commit: () => Promise<void> }> => {
    const c = new Client({ connectionString: t.settings.databaseUrl });
    await c.connect();
    await c.query('BEGIN');
    await c.query(
      `INSERT INTO wallet_balances (org_id, currency, available) VALUES ($1, 'USD', $2) ON CONFLICT (org_id, currency) DO UPDATE
         SET available = wallet_balances.available + EXCLUDED.available, updated_at = now()`,
      [orgId, minor.toString()],
    );
    await c.query(`INSERT INTO wallet_ledger (org_id, currency, kind, amount, memo) VALUES ($1, 'USD', 'credit', $2, 'race credit')`, [orgId, minor.toString()]);
    return {
      commit: async () => {
        await c.query('COMMIT');
        await c.end();
      },
    };
  };
  /** Resolves once a statement waits for a row lock held by another transaction (the balance row). */
  const someoneWaitsForALock = async (): Promise<void> => {
    for (let i = 0; i < 500; i++) {
      const [{ n }] = await t.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%wallet_balances%'`,
      );
      if (n > 0) return;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error('no statement came to wait for the balance row');
  };
  const balance = async (orgId: string) =>
    (await t.sql(`SELECT available::text AS available, reserved::text AS reserved FROM wallet_balances WHERE org_id = $1 AND currency = 'USD'`, [orgId]))[0];

  it('a renewal whose statement began before a credit committed (its snapshot 1.00 USD, the locked balance 3.00): 202 and the hold, not a 500', async () => {
    expect(await balance('org_edge')).toEqual({ available: '100000', reserved: '0' });
    const credit = await openCredit('org_edge', 200000n);
    const renewal = t.http.post('/v1/volumes/vol_edgev1/renew').set(bearer(apiToken('edge', 'rw'))).send({ term_months: 1 }).then((r) => r);
    await someoneWaitsForALock();
    await credit.commit();
    const res = await renewal;
    expect({ status: res.status, error: res.body.error }).toEqual({ status: 202, error: undefined });
    expect(res.body.operation).toEqual(expect.objectContaining({ type: 'volume.renew', status: 'pending' }));
    expect(await balance('org_edge')).toEqual({ available: '100000', reserved: '200000' });
    expect(await t.sql(`SELECT kind, amount::text AS amount, available_after::text AS available_after FROM wallet_ledger WHERE org_id = 'org_edge' ORDER BY seq`)).toEqual([
      { kind: 'credit', amount: '100000', available_after: '100000' },
      { kind: 'credit', amount: '200000', available_after: '300000' },
      { kind: 'hold', amount: '200000', available_after: '100000' },
    ]);
  });

  it('a purchase in the same position: 202 and the hold, not a 402 naming a balance that covers it', async () => {
    const credit = await openCredit('org_edge', 200000n);
    const purchase = t.http
      .post('/v1/volumes')
      .set(bearer(apiToken('edge', 'rw')))
      .send({ name: 'bought', region: 'id-jkt', type: 'premium', size_gb: 100, term_months: 1, currency: 'USD' })
      .then((r) => r);
    await someoneWaitsForALock();
    await credit.commit();
    const res = await purchase;
    expect({ status: res.status, error: res.body.error }).toEqual({ status: 202, error: undefined });
    expect(await balance('org_edge')).toEqual({ available: '100000', reserved: '400000' });
  });

  it(`${ORGS} wallets of ${WALLET} USD, each with ${VOLUMES} renewals (half under an Idempotency-Key) and ${PURCHASES} purchases at once while the workers settle: ${COVERED} accepted and the rest 402 per wallet, never a 500`, async () => {
    const requests: Promise<{ org: number; kind: string; status: number; body: Record<string, any> }>[] = [];
    for (let o = 0; o < ORGS; o++) {
      const auth = bearer(apiToken(`race${o}`, 'rw'));
      for (let v = 0; v < VOLUMES; v++) {
        const req = t.http.post(`/v1/volumes/vol_race${o}v${v + 1}/renew`).set(auth);
        if (v % 2 === 0) req.set('Idempotency-Key', `race-${o}-${v}`);
        requests.push(req.send({ term_months: 1 }).then((r) => ({ org: o, kind: 'renew', status: r.status, body: r.body })));
      }
      for (let p = 0; p < PURCHASES; p++) {
        const req = t.http.post('/v1/volumes').set(auth);
        if (p % 2 === 0) req.set('Idempotency-Key', `race-buy-${o}-${p}`);
        requests.push(
          req.send({ name: `buy-${p}`, region: 'id-jkt', type: 'premium', size_gb: 100, term_months: 1, currency: 'USD' }).then((r) => ({ org: o, kind: 'buy', status: r.status, body: r.body })),
        );
      }
    }
    // The workers settle accepted holds meanwhile (their balance rows locked the same way).
    const advance = t.app.get(AdvanceOperations);
    let settling = true;
    const worker = (async () => {
      while (settling) await advance.runUntilIdle();
    })();
    const responses = await Promise.all(requests);
    settling = false;
    await worker;

    const unexpected = responses.filter((r) => r.status !== 202 && r.status !== 402);
    expect(unexpected).toEqual([]);
    for (let o = 0; o < ORGS; o++) {
      const mine = responses.filter((r) => r.org === o);
      expect(mine.filter((r) => r.status === 202)).toHaveLength(COVERED);
      expect(mine.filter((r) => r.status === 402)).toHaveLength(VOLUMES + PURCHASES - COVERED);
      for (const r of mine.filter((x) => x.status === 402)) {
        expect(r.body.error).toEqual(expect.objectContaining({ code: 'insufficient_balance', details: { required: '2.00000', available: '1.00000', currency: 'USD' } }));
      }
      const [wallet] = await t.sql<{ available: string; reserved: string }>(
        `SELECT available::text AS available, reserved::text AS reserved FROM wallet_balances WHERE org_id = $1 AND currency = 'USD'`,
        [`org_race${o}`],
      );
      expect(wallet.available).toBe('100000');
      expect(await t.sql(`SELECT count(*)::int AS n FROM wallet_ledger WHERE org_id = $1 AND kind = 'hold'`, [`org_race${o}`])).toEqual([{ n: COVERED }]);
    }
  }, scaled(120_000));

  it('at the end, `verify` finds every invariant holding', () => {
    expectInvariantsHold(t.settings.databaseUrl);
  });
});
