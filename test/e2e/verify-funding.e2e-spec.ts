import { DataSource } from 'typeorm';
import { VerifyInvariants } from '../../src/modules/verification/application/verify-invariants.use-case';
import { TypeOrmInvariantChecks } from '../../src/modules/verification/infrastructure/typeorm-invariant-checks';
import { BlockStorage } from '../../src/modules/storage-provider/application/block-storage.port';
import { ComputeProvider } from '../../src/modules/servers/application/compute-provider.port';
import { Db, UnitOfWork } from '../../src/shared/database/transaction';
import { SystemClock } from '../../src/shared/kernel/clock/clock';
import { apiToken, bearer, organization, region } from '../support/fixtures';
import { PAYMENT_SECRET, sessionEvent, signature } from '../support/payments';
import { TestApp, startTestApp } from '../support/test-app';

/** verify's wallet.ledger_chain and top_ups.credited_once: sound after real top-ups, and each broken by tampering names what breaks it. */
describe('verify: the ledger chain and top-up credits', () => {
  let t: TestApp;
  let verify: VerifyInvariants;
  const key = bearer(apiToken('vf', 'bw'));
  const tamper = (statements: string[]) =>
    t.app.get(DataSource).transaction(async (m) => {
      await m.query(`SET LOCAL session_replication_role = replica`);
      for (const s of statements) await m.query(s);
    });

  beforeAll(async () => {
    t = await startTestApp({ paymentProviderWebhookSecret: PAYMENT_SECRET });
    verify = new VerifyInvariants(t.app.get(UnitOfWork), new TypeOrmInvariantChecks(t.app.get(Db), t.app.get(BlockStorage), t.app.get(ComputeProvider)), new SystemClock());
    await t.seed({ regions: [region()], organizations: [{ ...organization('vf'), api_keys: [{ name: 'b', scopes: ['billing:write'], token: apiToken('vf', 'bw') }] }] });
  });
  afterAll(async () => t?.close());

  async function topUp(amount: string, pay: boolean): Promise<string> {
    const res = await t.http.post('/v1/wallet/top-ups').set(key).send({ amount, currency: 'USD' });
    const id: string = res.body.top_up.id;
    if (pay) {
      const [{ session_id }] = await t.sql<{ session_id: string }>(`SELECT session_id FROM top_ups WHERE id = $1`, [id]);
      const body = sessionEvent('checkout.session.completed', { id: session_id, topUpId: id, amountTotal: Number(amount) * 100, currency: 'usd' });
      const r = await t.http.post('/v1/payment-events/simulated').set('Content-Type', 'application/json').set('Stripe-Signature', signature(body)).send(body);
      expect(r.status).toBe(200);
    }
    return id;
  }

  it('holds after top-ups paid, pending and canceled; breaks as tampered', async () => {
    const paid = await topUp('10', true);
    const pending = await topUp('11', false);
    const canceled = await topUp('12', false);
    expect((await t.http.post(`/v1/wallet/top-ups/${canceled}/cancel`).set(key)).status).toBe(200);
    const sound = await verify.execute();
    expect(sound.violations).toEqual([]);

    const [{ public_id: credit }] = await t.sql<{ public_id: string }>(`SELECT public_id FROM wallet_ledger WHERE top_up_id = $1`, [paid]);
    await tamper([
      // A succeeded top-up with no credit.
      `UPDATE top_ups SET status = 'succeeded', paid_at = now() WHERE id = '${pending}'`,
      // A paid top-up turned canceled, its credit kept.
      `UPDATE top_ups SET status = 'canceled', paid_at = NULL WHERE id = '${paid}'`,
      // A credit's after-value changed: it disagrees with its predecessor and with the balance.
      `UPDATE wallet_ledger SET available_after = available_after + 1 WHERE public_id = '${credit}'`,
    ]);
    const report = await verify.execute();
    const chain = report.violations.filter((v) => v.check === 'wallet.ledger_chain');
    expect(chain).toHaveLength(2);
    expect(chain).toEqual(expect.arrayContaining([
      {
        check: 'wallet.ledger_chain',
        subject: `org_vf/USD/${credit}`,
        message: "the newest row's after-values 11000001/0 differ from the balance 11000000/0 (available/reserved, minor units)",
        details: {
          org_id: 'org_vf', currency: 'USD', transaction_id: credit,
          available_after: '11000001', reserved_after: '0', expected_available: '11000000', expected_reserved: '0',
        },
      },
      {
        check: 'wallet.ledger_chain',
        subject: `org_vf/USD/${credit}`,
        message: 'after-values 11000001/0 but the previous row plus this movement gives 11000000/0 (available/reserved, minor units)',
        details: {
          org_id: 'org_vf', currency: 'USD', transaction_id: credit,
          available_after: '11000001', reserved_after: '0', expected_available: '11000000', expected_reserved: '0',
        },
      },
    ]));
    const credited = report.violations.filter((v) => v.check === 'top_ups.credited_once');
    expect(Object.fromEntries(credited.map((v) => [v.subject, [v.message, v.details]]))).toEqual({
      [pending]: ['succeeded top-up with 0 credit(s), 0 of its amount, currency and organization', { org_id: 'org_vf', status: 'succeeded', credits: 0, matching_credits: 0 }],
      [paid]: ['canceled top-up with 1 credit(s)', { org_id: 'org_vf', status: 'canceled', credits: 1, matching_credits: 1 }],
    });
    expect(report.checks.filter((c) => c.violations > 0).map((c) => c.name)).toEqual(['wallet.ledger_chain', 'top_ups.credited_once']);
  });
});
