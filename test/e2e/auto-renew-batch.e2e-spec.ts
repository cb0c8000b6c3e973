import { AdvanceOperations } from '../../src/modules/operations/application/advance-operations.use-case';
import { AutoRenewTerms } from '../../src/modules/terms/application/auto-renew.use-case';
import { VerifyInvariants } from '../../src/modules/verification/application/verify-invariants.use-case';
import { FixedClock } from '../../src/shared/kernel/clock/clock';
import { apiToken, bearer, orgWithDetachedVolumes } from '../support/fixtures';
import { IMAGES, SERVER_PLANS, serverRegion } from '../support/servers';
import { TestApp, startTestApp } from '../support/test-app';

const NOW = '2026-11-23T10:00:00.000Z';
const at = (seconds: number) => new Date(new Date(NOW).getTime() + seconds * 1000).toISOString();

/**
 * Automatic renewals accepted a batch at a time (one acceptance statement for every resource the
 * sweep claimed, several organizations): per organization and currency, in the order of the
 * attempts' times, while the balance covers them. The first the balance cannot cover and every
 * later one of that organization and currency fail with what the balance had left; the others
 * are held, audited, run and charged once each; the ledger's positions and after-values are those
 * a renewal at a time would give; verify is clean.
 */
describe('terms: automatic renewals accepted as one batch', () => {
  let t: TestApp;
  const clock = new FixedClock(new Date(NOW));
  const auto = { enabled: true, term_months: 1 };

  beforeAll(async () => {
    t = await startTestApp({ autoRenewLeadS: 3600, autoRenewRetryS: 600 }, clock);
    // Each disk renews for 2.00000 USD a month (100 GB premium); org_gb's server for 4.50000 USD.
    const ga = orgWithDetachedVolumes('ga', 4, { USD: '5.00000', IDR: '0' }, { auto_renew: auto });
    const gb = orgWithDetachedVolumes('gb', 2, { USD: '20.00000', IDR: '0' }, { auto_renew: auto });
    await t.seed({
      server_plans: SERVER_PLANS,
      images: IMAGES,
      regions: [serverRegion('id-jkt', 64)],
      organizations: [
        { ...ga, servers: [], volumes: ga.volumes.map((v, i) => ({ ...v, expires_at: at(1800 + 100 * i) })) },
        {
          ...gb,
          servers: [{ id: 'vm_gbapp1', name: 'app-1', region: 'id-jkt', zone: 'id-jkt-a', plan: 'cx1', image: 'debian-12', term_months: 1, currency: 'USD', expires_at: at(1700), auto_renew: auto }],
          volumes: gb.volumes.map((v, i) => ({ ...v, expires_at: at(1850 + 100 * i) })),
        },
      ],
    });
  });
  afterAll(async () => t?.close());

  it('one sweep: the attempts each balance covers accepted in order, the rest failed with what was left; each charged once', async () => {
    expect(await t.app.get(AutoRenewTerms).execute()).toBe(7);

    const attempts = await t.sql<{ resource_id: string; outcome: string; op: boolean }>(
      `SELECT resource_id, outcome, operation_id IS NOT NULL AS op FROM auto_renew_attempts ORDER BY resource_id`,
    );
    expect(attempts).toEqual([
      { resource_id: 'vm_gbapp1', outcome: 'accepted', op: true },
      { resource_id: 'vol_gav1', outcome: 'accepted', op: true },
      { resource_id: 'vol_gav2', outcome: 'accepted', op: true },
      { resource_id: 'vol_gav3', outcome: 'insufficient_balance', op: false },
      { resource_id: 'vol_gav4', outcome: 'insufficient_balance', op: false },
      { resource_id: 'vol_gbv1', outcome: 'accepted', op: true },
      { resource_id: 'vol_gbv2', outcome: 'accepted', op: true },
    ]);
    const ga = bearer(apiToken('ga', 'rw'));
    const refused = (await t.http.get('/v1/volumes/vol_gav4').set(ga)).body.auto_renew;
    expect(refused).toEqual({
      enabled: true, term_months: 1, next_attempt_at: at(600),
      last_attempt: { at: NOW, outcome: 'insufficient_balance', operation_id: null, required: '2.00000', available: '1.00000', currency: 'USD' },
    });
    expect((await t.http.get('/v1/volumes/vol_gav3').set(ga)).body.auto_renew.last_attempt).toEqual(refused.last_attempt);
    const accepted = (await t.http.get('/v1/volumes/vol_gav2').set(ga)).body.auto_renew;
    expect(accepted).toEqual({
      enabled: true, term_months: 1, next_attempt_at: null,
      last_attempt: { at: NOW, outcome: 'accepted', operation_id: expect.stringMatching(/^op_/), required: null, available: null, currency: null },
    });

    // The holds (the disks' batch, then the servers'): positions one after another per organization, after-values the running balance.
    const ledger = async (org: string) =>
      t.sql<{ seq: string; kind: string; amount: string; available_after: string; reserved_after: string }>(
        `SELECT seq::text, kind, amount::text, available_after::text, reserved_after::text FROM wallet_ledger WHERE org_id = $1 AND currency = 'USD' ORDER BY seq`,
        [org],
      );
    const heldGa = await ledger('org_ga');
    expect(heldGa.map(({ kind, amount, available_after, reserved_after }) => ({ kind, amount, available_after, reserved_after }))).toEqual([
      { kind: 'credit', amount: '500000', available_after: '500000', reserved_after: '0' },
      { kind: 'hold', amount: '200000', available_after: '300000', reserved_after: '200000' },
      { kind: 'hold', amount: '200000', available_after: '100000', reserved_after: '400000' },
    ]);
    expect(heldGa.map((r) => Number(r.seq))).toEqual([1, 2, 3].map((n) => Number(heldGa[0].seq) + n - 1));
    expect((await ledger('org_gb')).map((r) => [r.kind, r.amount, r.available_after])).toEqual([
      ['credit', '2000000', '2000000'],
      ['hold', '200000', '1800000'],
      ['hold', '200000', '1600000'],
      ['hold', '450000', '1150000'],
    ]);
    const audits = await t.sql<{ org_id: string; action: string; actor_type: string; data: Record<string, unknown> }>(
      `SELECT org_id, action, actor_type, data FROM audit_log WHERE data->>'auto' = 'true' ORDER BY org_id, seq`,
    );
    expect(audits.map((a) => [a.org_id, a.action, a.actor_type, a.data.amount])).toEqual([
      ['org_ga', 'volume.renew', 'system', '2.00000'],
      ['org_ga', 'volume.renew', 'system', '2.00000'],
      ['org_gb', 'volume.renew', 'system', '2.00000'],
      ['org_gb', 'volume.renew', 'system', '2.00000'],
      ['org_gb', 'server.renew', 'system', '4.50000'],
    ]);

    // A second sweep at once: nothing due (the accepted ones renewed for their term end, the failed ones wait).
    expect(await t.app.get(AutoRenewTerms).execute()).toBe(0);
    expect(await t.app.get(AdvanceOperations).runUntilIdle()).toMatchObject({ succeeded: 5, failed: 0 });
    const balances = await t.sql<{ org_id: string; available: string; reserved: string }>(
      `SELECT org_id, available::text, reserved::text FROM wallet_balances WHERE currency = 'USD' AND org_id IN ('org_ga', 'org_gb') ORDER BY org_id`,
    );
    expect(balances).toEqual([
      { org_id: 'org_ga', available: '100000', reserved: '0' },
      { org_id: 'org_gb', available: '1150000', reserved: '0' },
    ]);
    expect(await t.sql(`SELECT id, to_char(expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') AS e FROM volumes WHERE org_id = 'org_ga' ORDER BY id`)).toEqual([
      { id: 'vol_gav1', e: '2026-12-23T10:30:00' },
      { id: 'vol_gav2', e: '2026-12-23T10:31:40' },
      { id: 'vol_gav3', e: '2026-11-23T10:33:20' },
      { id: 'vol_gav4', e: '2026-11-23T10:35:00' },
    ]);
    // Every check but the sweep's deadlines (read against the database's time, past this file's fixed clock: the refused disks are due for suspension).
    const violations = (await t.app.get(VerifyInvariants).execute()).violations;
    expect(violations.filter((v) => v.check !== 'terms.deadlines_met')).toEqual([]);
    expect(violations.map((v) => v.subject)).toEqual(['vol_gav3', 'vol_gav4']);
  });
});
