import { AdvanceOperations } from '../../src/modules/operations/application/advance-operations.use-case';
import { FixedClock } from '../../src/shared/kernel/clock/clock';
import { apiToken, bearer, orgWithDetachedVolumes, region } from '../support/fixtures';
import { TestApp, startTestApp } from '../support/test-app';

const NOW = '2026-11-22T10:00:00.000Z';

/**
 * Renewals executed as one set-based batch (RenewalExecutor.commitMany): several organizations,
 * and volumes that fail a domain rule in the middle of the batch. Those fail alone (the
 * per-operation path decides, its hold released); the others succeed, each charged once.
 */
describe('renewals executed as one batch', () => {
  let t: TestApp;
  const clock = new FixedClock(new Date(NOW));

  beforeAll(async () => {
    t = await startTestApp({}, clock);
    await t.seed({
      regions: [region()],
      organizations: [
        orgWithDetachedVolumes('ba', 3, { USD: '100.00000' }, { expires_at: '2027-01-31T00:00:00.000Z' }),
        orgWithDetachedVolumes('bb', 2, { USD: '100.00000' }, { expires_at: '2027-01-31T00:00:00.000Z' }),
      ],
    });
  });
  afterAll(async () => t?.close());

  const renew = (suffix: string, volumeId: string) =>
    t.http.post(`/v1/volumes/${volumeId}/renew`).set(bearer(apiToken(suffix, 'rw'))).send({ term_months: 1 });

  it('renews and charges the renewable volumes of the batch; a deleted or deleting volume fails its operation alone, hold released', async () => {
    const ops = new Map<string, string>();
    for (const [suffix, volume] of [['ba', 'vol_bav1'], ['bb', 'vol_bbv1'], ['ba', 'vol_bav2'], ['bb', 'vol_bbv2'], ['ba', 'vol_bav3']]) {
      const res = await renew(suffix, volume);
      expect(res.status).toBe(202);
      ops.set(volume, res.body.operation.id);
    }
    await t.sql(`UPDATE volumes SET status = 'deleting' WHERE id = 'vol_bav2'`);
    await t.sql(`UPDATE volumes SET status = 'deleted', deleted_at = '2026-11-22T10:00:01Z' WHERE id = 'vol_bbv1'`);

    expect(await t.app.get(AdvanceOperations).runOnce()).toEqual({ claimed: 5, succeeded: 3, failed: 2, skipped: 0 });

    const operation = async (suffix: string, volume: string) =>
      (await t.http.get(`/v1/operations/${ops.get(volume)}`).set(bearer(apiToken(suffix, 'rw')))).body;
    for (const [suffix, volume] of [['ba', 'vol_bav1'], ['bb', 'vol_bbv2'], ['ba', 'vol_bav3']]) {
      expect(await operation(suffix, volume)).toEqual({
        id: ops.get(volume),
        type: 'volume.renew',
        status: 'succeeded',
        vm_id: null,
        volume_id: volume,
        steps: [{ name: 'renewing', status: 'succeeded' }],
        result: { volume_id: volume, term_months: 1, expires_at: '2027-02-28T00:00:00.000Z', charged: { currency: 'USD', amount: '2.00000' } },
        error: null,
        created_at: NOW,
        finished_at: NOW,
      });
    }
    expect(await operation('ba', 'vol_bav2')).toMatchObject({
      status: 'failed',
      steps: [{ name: 'renewing', status: 'failed' }],
      result: null,
      error: { code: 'invalid_state', message: 'Volume vol_bav2 is being deleted and cannot be renewed' },
    });
    expect(await operation('bb', 'vol_bbv1')).toMatchObject({
      status: 'failed',
      error: { code: 'invalid_state', message: 'Volume vol_bbv1 is deleted and cannot be renewed' },
    });

    expect(
      await t.sql(`SELECT id, to_char(expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS e, term_months FROM volumes WHERE org_id IN ('org_ba', 'org_bb') ORDER BY id`),
    ).toEqual([
      { id: 'vol_bav1', e: '2027-02-28', term_months: 1 },
      { id: 'vol_bav2', e: '2027-01-31', term_months: 1 },
      { id: 'vol_bav3', e: '2027-02-28', term_months: 1 },
      { id: 'vol_bbv1', e: '2027-01-31', term_months: 1 },
      { id: 'vol_bbv2', e: '2027-02-28', term_months: 1 },
    ]);
    const settlements = await t.sql<{ operation_id: string; kinds: string }>(
      `SELECT operation_id, string_agg(kind || ' ' || amount::text, ', ' ORDER BY id) AS kinds FROM wallet_ledger
        WHERE org_id IN ('org_ba', 'org_bb') AND operation_id IS NOT NULL GROUP BY operation_id`,
    );
    expect(Object.fromEntries(settlements.map((r) => [r.operation_id, r.kinds]))).toEqual({
      [ops.get('vol_bav1')!]: 'hold 200000, capture 200000',
      [ops.get('vol_bav2')!]: 'hold 200000, release 200000',
      [ops.get('vol_bav3')!]: 'hold 200000, capture 200000',
      [ops.get('vol_bbv1')!]: 'hold 200000, release 200000',
      [ops.get('vol_bbv2')!]: 'hold 200000, capture 200000',
    });
    expect(
      await t.sql(`SELECT org_id, available::text AS available, reserved::text AS reserved FROM wallet_balances WHERE org_id IN ('org_ba', 'org_bb') ORDER BY org_id`),
    ).toEqual([
      { org_id: 'org_ba', available: '9600000', reserved: '0' },
      { org_id: 'org_bb', available: '9800000', reserved: '0' },
    ]);
    // Nothing left to do, nothing settled twice.
    expect(await t.app.get(AdvanceOperations).runOnce()).toEqual({ claimed: 0, succeeded: 0, failed: 0, skipped: 0 });
  });
});
