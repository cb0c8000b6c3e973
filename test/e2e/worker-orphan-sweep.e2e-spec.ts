import { SchedulerRegistry } from '@nestjs/schedule';
import { AdvanceOperations } from '../../src/modules/operations/application/advance-operations.use-case';
import { BlockStorage } from '../../src/modules/storage-provider/application/block-storage.port';
import { usingPostgres } from '../support/database';
import { apiToken, bearer, organization, region } from '../support/fixtures';
import { ServerProcess, runCli, startServerProcess } from '../support/processes';
import { sleep, waitFor } from '../support/renewals';
import { TestApp, startTestApp } from '../support/test-app';
import { expectInvariantsHold } from '../support/verify';

/**
 * The orphan disk sweep (CleanUpOrphanDisks, README "The storage provider") is scheduled by the
 * application in the processes that run the worker, every ORPHAN_DISK_SWEEP_INTERVAL_MS. A failed
 * purchase whose disk the provider kept (the create call took effect but its answer was lost,
 * then the provider stayed unreachable through the retry window and the compensation) leaves a
 * disk that `cli verify` reports; a worker process's scheduled sweep deletes it.
 */
const itOnPostgres = usingPostgres() ? it : it.skip;
if (!usingPostgres()) {
  console.log('worker-orphan-sweep.e2e-spec: the server-process test is skipped, needs DATABASE_URL (PostgreSQL); a server process cannot share the embedded engine of this test');
}

describe('the orphan disk sweep, scheduled in worker processes', () => {
  let t: TestApp;
  const running: ServerProcess[] = [];
  const rw = bearer(apiToken('os', 'rw'));

  beforeAll(async () => {
    // No worker in the test's process: the test drives the purchase's steps itself.
    t = await startTestApp({ providerRetryWindowMs: 0 });
    await t.seed({ regions: [region('id-jkt', { capacity_gb: 1000 })], organizations: [{ ...organization('os'), volumes: [] }] });
  });
  afterEach(async () => {
    for (const p of running.splice(0)) await p.stop();
  });
  afterAll(async () => t?.close());

  const disk = async (volumeId: string) =>
    (await t.sql<{ deleted: boolean }>(`SELECT deleted_at IS NOT NULL AS deleted FROM provider_disks WHERE volume_id = $1`, [volumeId]))[0];

  it('a process that runs the worker schedules the sweep; one that does not (WORKER_ENABLED=false) does not', async () => {
    expect(t.app.get(SchedulerRegistry).doesExist('interval', 'orphan-disk-sweep')).toBe(false);
    const worker = await startTestApp({ workerEnabled: true, workerIntervalMs: 3_600_000 });
    try {
      expect(worker.app.get(SchedulerRegistry).doesExist('interval', 'orphan-disk-sweep')).toBe(true);
    } finally {
      await worker.close();
    }
  });

  itOnPostgres('a failed purchase\'s disk left at the provider is reported by verify, then deleted by the scheduled sweep of a worker process (not by an API-only one)', async () => {
    const res = await t.http.post('/v1/volumes').set(rw).send({ name: 'orphaned', region: 'id-jkt', size_gb: 10, term_months: 1, currency: 'USD' });
    expect(res.status).toBe(202);
    const volumeId: string = res.body.volume.id;
    const opId: string = res.body.operation.id;
    // The worker's create call took effect at the provider and its answer was lost ...
    await t.app.get(BlockStorage).createDisk({ volumeId, step: `${opId}/creating_volume`, zoneId: 'id-jkt-a', sizeGb: 10, type: 'premium' });
    // ... then the provider stayed unreachable: the retried step gives up (window 0 here) and the compensation fails too.
    t.settings.providerDown = true;
    try {
      expect(await t.app.get(AdvanceOperations).runUntilIdle()).toMatchObject({ claimed: 1, failed: 1 });
    } finally {
      t.settings.providerDown = false;
    }
    const op = await t.http.get(`/v1/operations/${opId}`).set(rw);
    expect(op.body).toMatchObject({ status: 'failed', error: { code: 'provider_unavailable' } });
    expect((await t.http.get(`/v1/volumes/${volumeId}`).set(rw)).body).toMatchObject({ status: 'deleted' });
    expect((await t.http.get('/v1/wallet').set(rw)).body.balances).toContainEqual(expect.objectContaining({ currency: 'USD', available: '100.00000', reserved: '0.00000' }));
    expect(await disk(volumeId)).toEqual({ deleted: false });

    const env = { DATABASE_URL: t.settings.databaseUrl, DEMO_SEED: 'false', ORPHAN_DISK_SWEEP_INTERVAL_MS: '200', DB_POOL_SIZE: '3' };
    const report = runCli(['verify'], env);
    expect(report.status).not.toBe(0);
    expect(JSON.parse(report.stdout).violations).toEqual([
      expect.objectContaining({ check: 'provider.disks_match_volumes', subject: volumeId, message: expect.stringMatching(/^volume is deleted but its disk disk_\w+ still exists at the provider$/) }),
    ]);

    // An API-only process never sweeps, however many of its intervals pass.
    const api = await startServerProcess({ ...env, WORKER_ENABLED: 'false' });
    running.push(api);
    await sleep(1500);
    expect(await disk(volumeId)).toEqual({ deleted: false });

    const worker = await startServerProcess({ ...env, WORKER_ENABLED: 'true' });
    running.push(worker);
    await waitFor('the scheduled sweep to delete the disk', async () => (await disk(volumeId)).deleted, 30_000);
    expect(await t.sql(`SELECT step, action FROM provider_calls WHERE volume_id = $1 ORDER BY created_at`, [volumeId])).toEqual([
      { step: `${opId}/creating_volume`, action: 'create' },
      { step: 'orphan-cleanup', action: 'delete' },
    ]);
    expect(worker.output()).toContain('orphan disks deleted at the provider');
    expect(api.output()).not.toContain('orphan');
    expectInvariantsHold(t.settings.databaseUrl);
    // Shut down as in production (SIGTERM): the sweep's job stops with the process, exit 0.
    expect(await worker.stop()).toBe(0);
    expect(await api.stop()).toBe(0);
  });
});
