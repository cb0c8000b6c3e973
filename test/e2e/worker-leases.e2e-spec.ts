import { Clock } from '../../src/shared/kernel/clock/clock';
import { Settings } from '../../src/shared/config/settings';
import { WorkerUnitOfWork } from '../../src/shared/database/unit-of-work';
import { EventOutbox } from '../../src/modules/webhooks/application/event-outbox.port';
import { AdvanceOperations, CLAIM_BATCH_SIZE, STEPPING_AT_ONCE } from '../../src/modules/operations/application/advance-operations.use-case';
import { OperationExecutors } from '../../src/modules/operations/application/operation-executors';
import { OperationRepository } from '../../src/modules/operations/application/operations.port';
import { OperationSignals } from '../../src/modules/operations/application/operation-signals.port';
import { WalletLedger } from '../../src/modules/wallet/application/wallet.port';
import { apiToken, bearer, orgWithDetachedVolumes, region } from '../support/fixtures';
import { scaled } from '../support/deadlines';
import { sleep } from '../support/renewals';
import { TestApp, startTestApp } from '../support/test-app';

/**
 * A worker keeps the leases of the batch it works through: with a slow provider (each call
 * longer than WORKER_LEASE_MS) and more operations than it steps at once, a second worker
 * claiming all along takes none of them over, and each operation ends in one attempt. Before,
 * the waiting operations' leases ran out, another worker took them (an attempt counted each
 * time) and, on a loaded machine, operations that never broke failed as "abandoned after 5
 * interrupted attempts". Both engines.
 */
describe('worker leases: a live worker keeps what it claimed', () => {
  let t: TestApp;
  const N = STEPPING_AT_ONCE * 2;
  // A lease of a second on a quiet machine, stretched with the load (a late tick of a loaded event loop is not what is tested).
  const LEASE_MS = scaled(1000);

  beforeAll(async () => {
    t = await startTestApp({ workerLeaseMs: LEASE_MS, providerLatencyMs: 2 * LEASE_MS });
    await t.seed({ regions: [region('id-jkt', { capacity_gb: 100000 })], organizations: [orgWithDetachedVolumes('wls', N)] });
  });
  afterAll(async () => t?.close());

  /** A second worker of the same app (its own worker id), as another process would be. */
  function secondWorker(): AdvanceOperations {
    const g = <T>(token: unknown): T => t.app.get(token as never);
    return new AdvanceOperations(
      g(WorkerUnitOfWork), g(OperationRepository), g(OperationExecutors), g(WalletLedger), g(Clock), g(Settings), g(OperationSignals), undefined, g(EventOutbox),
    );
  }

  it(`${N} deletions whose provider calls outlast the lease: a second worker claiming every 100 ms takes none; each ends in one attempt`, async () => {
    const ids: string[] = [];
    for (let i = 1; i <= N; i++) {
      const res = await t.http.delete(`/v1/volumes/vol_wlsv${i}`).set(bearer(apiToken('wls', 'rw')));
      expect(res.status).toBe(202);
      ids.push(res.body.operation.id);
    }
    expect(N).toBeLessThanOrEqual(CLAIM_BATCH_SIZE);
    const first = t.app.get(AdvanceOperations);
    const second = secondWorker();
    const claimed = await first.claim(CLAIM_BATCH_SIZE);
    expect(claimed.sort()).toEqual([...ids].sort());
    let done = false;
    const stolen: string[] = [];
    const thief = (async () => {
      while (!done) {
        await sleep(100);
        stolen.push(...(await second.claim(CLAIM_BATCH_SIZE)));
      }
    })();
    const outcomes = await first.executeBatch(claimed).finally(() => (done = true));
    await thief;

    expect(stolen).toEqual([]);
    expect([...outcomes.values()]).toEqual(Array(N).fill('succeeded'));
    expect(
      await t.sql(`SELECT type, status, attempts, count(*)::int AS n FROM operations WHERE id = ANY($1::text[]) GROUP BY 1, 2, 3`, [ids]),
    ).toEqual([{ type: 'volume.delete', status: 'succeeded', attempts: 1, n: N }]);
    expect(await t.sql(`SELECT status, count(*)::int AS n FROM volumes WHERE org_id = 'org_wls' GROUP BY status`)).toEqual([{ status: 'deleted', n: N }]);
    expect(await t.sql(`SELECT count(*)::int AS n FROM provider_disks WHERE volume_id LIKE 'vol_wlsv%' AND deleted_at IS NULL`)).toEqual([{ n: 0 }]);
  }, scaled(60_000));
});
