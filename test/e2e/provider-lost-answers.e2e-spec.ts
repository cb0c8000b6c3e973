import { scaled } from '../support/deadlines';
import { AdvanceOperations } from '../../src/modules/operations/application/advance-operations.use-case';
import { CleanUpOrphanDisks } from '../../src/modules/volumes/application/clean-up-orphan-disks.use-case';
import { ProviderGateway } from '../../src/modules/storage-provider/application/provider-gateway';
import { ReconcileVolumesWithProvider } from '../../src/modules/volumes/application/reconcile-volumes.use-case';
import { FixedClock } from '../../src/shared/kernel/clock/clock';
import { apiToken, bearer, organization, region } from '../support/fixtures';
import { TestApp, startTestApp } from '../support/test-app';
import { expectVerified } from '../support/verify';

const NOW = new Date('2026-11-30T08:00:00.000Z');

/**
 * Provider calls that took effect but whose answer was lost, then an outage longer than the
 * retry window: the operation fails, and what it gives back follows the provider's truth
 * (read before giving back), never "nothing happened". A failed delete never leaves a volume
 * `available` without its disk; the reconciliation sweep settles what could not be read.
 */
describe('lost provider answers: failed operations follow the provider, the reconciliation sweep repairs', () => {
  let t: TestApp;
  const clock = new FixedClock(NOW);
  const rw = bearer(apiToken('la', 'rw'));

  beforeAll(async () => {
    t = await startTestApp({ rateLimitPerMinute: 100_000 }, clock);
    await t.seed({
      regions: [region('id-jkt', { capacity_gb: 10_000 })],
      organizations: [{ ...organization('la', { wallet: { USD: '1000.00000', IDR: '0' } }), volumes: [], servers: [{ id: 'vm_laweb1', name: 'web-1', region: 'id-jkt', zone: 'id-jkt-a' }] }],
    });
  });
  afterAll(async () => t?.close());

  const unfinished = async () => Number((await t.sql<{ n: string }>(`SELECT count(*) AS n FROM operations WHERE status IN ('pending', 'running')`))[0].n);

  /** Runs the worker, the clock moving 250 ms a round, until no operation is unfinished. */
  async function drain(): Promise<void> {
    for (let round = 0; round < 400 && (await unfinished()) > 0; round++) {
      clock.set(new Date(clock.now().getTime() + 250));
      await t.app.get(AdvanceOperations).runUntilIdle();
    }
    expect(await unfinished()).toBe(0);
  }

  /** Live volumes the API shows as available or attached but whose disk the provider does not hold. */
  const availableWithoutDisk = () =>
    t.sql(
      `SELECT v.id, v.status FROM volumes v
        WHERE v.deleted_at IS NULL AND v.status IN ('available', 'attached')
          AND NOT EXISTS (SELECT 1 FROM provider_disks d WHERE d.volume_id = v.id AND d.deleted_at IS NULL)`,
    );

  it('PROVIDER_FAULTS=0.5, a 1.5 s retry window: 30 purchases then deletes never leave a volume available without its disk; the sweep settles the rest and verify is clean', async () => {
    t.settings.providerFaults = 0.5;
    t.settings.providerRetryWindowMs = 1_500;
    t.settings.providerRetryBaseMs = 250;
    try {
      for (let i = 0; i < 30; i++) {
        await t.app.get(ProviderGateway).probeOnce();
        const res = await t.http.post('/v1/volumes').set(rw).send({ region: 'id-jkt', size_gb: 10, term_months: 1, currency: 'USD', name: `lost-${i}` });
        expect(res.status).toBe(202);
      }
      await drain();
      expect(await availableWithoutDisk()).toEqual([]);

      const live = await t.sql<{ id: string }>(`SELECT id FROM volumes WHERE deleted_at IS NULL AND status = 'available' ORDER BY id`);
      expect(live.length).toBeGreaterThan(0);
      for (const { id } of live) {
        // The circuit may be open after a run of faults: the probe (never struck by faults) closes it, as a process's own probe does.
        await t.app.get(ProviderGateway).probeOnce();
        const res = await t.http.delete(`/v1/volumes/${id}`).set(rw);
        expect({ id, status: res.status }).toEqual({ id, status: 202 });
      }
      await drain();

      // The point of it all: whatever failed, no volume is available (or attached) without its disk.
      expect(await availableWithoutDisk()).toEqual([]);
      // A failed delete shows the disk as it is: deleted when gone, available when still there, deleting when unread.
      const failedDeletes = await t.sql<{ id: string; status: string; deleted: boolean; disk: boolean }>(
        `SELECT v.id, v.status, v.deleted_at IS NOT NULL AS deleted,
                EXISTS (SELECT 1 FROM provider_disks d WHERE d.volume_id = v.id AND d.deleted_at IS NULL) AS disk
           FROM operations o JOIN volumes v ON v.id = o.volume_id
          WHERE o.type = 'volume.delete' AND o.status = 'failed'`,
      );
      for (const f of failedDeletes) {
        if (f.status === 'deleting') continue; // the provider could not be read: the sweep settles it below
        expect({ id: f.id, deleted: f.deleted }).toEqual({ id: f.id, deleted: !f.disk });
      }
    } finally {
      t.settings.providerFaults = 0;
      t.settings.providerRetryWindowMs = 600_000;
      t.settings.providerRetryBaseMs = 1_000;
    }
    await t.app.get(ProviderGateway).probeOnce();
    await t.app.get(ReconcileVolumesWithProvider).execute();
    await t.app.get(CleanUpOrphanDisks).execute();
    expect(await t.sql(`SELECT id FROM volumes WHERE deleted_at IS NULL AND status = 'deleting'`)).toEqual([]);
    expect(await availableWithoutDisk()).toEqual([]);
    await expectVerified(t);
  }, scaled(240_000));

  it('the sweep repairs and audits: a deleting volume whose disk is gone becomes deleted, an attached one whose disk was detached becomes available, an available one whose disk is attached is detached at the provider', async () => {
    const buy = async (name: string, server?: string) => {
      const res = await t.http.post('/v1/volumes').set(rw).send({ region: 'id-jkt', size_gb: 10, term_months: 1, currency: 'USD', name, ...(server ? { server_id: server, mount_path: `/mnt/${name}` } : {}) });
      expect(res.status).toBe(202);
      return res.body.volume.id as string;
    };
    const gone = await buy('sweep-gone');
    const detached = await buy('sweep-detached', 'vm_laweb1');
    const stray = await buy('sweep-stray');
    await drain();
    // What lost answers leave behind: the provider moved, the rows did not.
    await t.sql(`UPDATE volumes SET status = 'deleting' WHERE id = $1`, [gone]);
    await t.sql(`UPDATE provider_disks SET deleted_at = now() WHERE volume_id = $1`, [gone]);
    await t.sql(`UPDATE provider_disks SET server_id = NULL, mount_path = NULL, mounted = false WHERE volume_id = $1`, [detached]);
    await t.sql(`UPDATE provider_disks SET server_id = 'vm_laweb1', mount_path = '/mnt/x', mounted = true WHERE volume_id = $1`, [stray]);
    const usedBefore = (await t.sql<{ used_gb: string }>(`SELECT used_gb::text FROM region_usage WHERE id = 'id-jkt'`))[0].used_gb;

    expect(await t.app.get(ReconcileVolumesWithProvider).execute()).toBe(3);

    expect(await t.sql(`SELECT id, status, server_id, mounted, deleted_at IS NOT NULL AS deleted FROM volumes WHERE id = ANY($1::text[]) ORDER BY name`, [[gone, detached, stray]])).toEqual([
      { id: detached, status: 'available', server_id: null, mounted: false, deleted: false },
      { id: gone, status: 'deleted', server_id: null, mounted: false, deleted: true },
      { id: stray, status: 'available', server_id: null, mounted: false, deleted: false },
    ]);
    expect(await t.sql(`SELECT server_id, mounted FROM provider_disks WHERE volume_id = $1`, [stray])).toEqual([{ server_id: null, mounted: false }]);
    expect((await t.sql<{ used_gb: string }>(`SELECT used_gb::text FROM region_usage WHERE id = 'id-jkt'`))[0].used_gb).toBe(String(Number(usedBefore) - 10));
    const audit = await t.sql(
      `SELECT target_id, actor_type, actor_id, data->>'reason' AS reason FROM audit_log WHERE action = 'volume.reconciled' AND target_id = ANY($1::text[]) ORDER BY target_id`,
      [[gone, detached, stray]],
    );
    expect(audit).toEqual(
      [
        { target_id: gone, actor_type: 'system', actor_id: null, reason: 'the disk was deleted at the provider' },
        { target_id: detached, actor_type: 'system', actor_id: null, reason: 'the disk was detached at the provider' },
        { target_id: stray, actor_type: 'system', actor_id: null, reason: 'the disk is attached to vm_laweb1 at the provider (an attach that failed)' },
      ].sort((a, b) => (a.target_id < b.target_id ? -1 : 1)),
    );
    // Nothing left to repair: a second sweep changes nothing.
    expect(await t.app.get(ReconcileVolumesWithProvider).execute()).toBe(0);
    await expectVerified(t);
  });

  it('a volume whose disk is gone at the provider is flagged by the sweep: renew and attach answer 409 invalid_state, nothing charged', async () => {
    const res = await t.http.post('/v1/volumes').set(rw).send({ region: 'id-jkt', size_gb: 10, term_months: 1, currency: 'USD', name: 'vanished' });
    const id = res.body.volume.id as string;
    await drain();
    await t.sql(`UPDATE provider_disks SET deleted_at = now() WHERE volume_id = $1`, [id]);
    expect(await t.app.get(ReconcileVolumesWithProvider).execute()).toBe(1);
    const [flag] = await t.sql<{ since: Date | null; status: string }>(`SELECT disk_missing_since AS since, status FROM volumes WHERE id = $1`, [id]);
    expect(flag.status).toBe('available');
    expect(flag.since).toBeInstanceOf(Date);
    const wallet = async () => (await t.sql(`SELECT available::text, reserved::text FROM wallet_balances WHERE org_id = 'org_la' AND currency = 'USD'`))[0];
    const before = await wallet();

    const renew = await t.http.post(`/v1/volumes/${id}/renew`).set(rw).send({ term_months: 1 });
    expect(renew.status).toBe(409);
    expect(renew.body).toEqual({
      error: {
        code: 'invalid_state',
        message: `Volume ${id} has no disk at the storage provider (missing since ${flag.since!.toISOString()}); it cannot be renewed`,
        request_id: renew.headers['x-request-id'],
        details: {},
      },
    });
    const attach = await t.http.post(`/v1/volumes/${id}/attach`).set(rw).send({ server_id: 'vm_laweb1' });
    expect(attach.status).toBe(409);
    expect(attach.body.error).toEqual({
      code: 'invalid_state',
      message: `Volume ${id} has no disk at the storage provider (missing since ${flag.since!.toISOString()}); it cannot be attached`,
      request_id: attach.headers['x-request-id'],
      details: {},
    });
    expect(await wallet()).toEqual(before);
    expect(await t.sql(`SELECT count(*)::int AS n FROM operations WHERE volume_id = $1 AND type IN ('volume.renew', 'volume.attach')`, [id])).toEqual([{ n: 0 }]);
    expect(await t.sql(`SELECT data->>'reason' AS reason FROM audit_log WHERE action = 'volume.reconciled' AND target_id = $1`, [id])).toEqual([{ reason: 'available volume has no disk at the provider' }]);
    // A second sweep reports it again without another audit entry.
    expect(await t.app.get(ReconcileVolumesWithProvider).execute()).toBe(0);
  });
});
