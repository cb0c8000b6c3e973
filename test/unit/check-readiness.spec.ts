import { CHECK_TIMEOUT_MS, CheckReadiness } from '../../src/modules/monitoring/application/check-readiness.use-case';
import { InMemoryDatabaseHealth, InMemoryRedisHealth } from '../../src/modules/monitoring/testing/in-memory-readiness';
import { ComputeHealth } from '../../src/modules/servers/application/compute-provider.port';
import { ProviderHealth } from '../../src/modules/storage-provider/application/block-storage.port';

class FakeProviderHealth extends ProviderHealth {
  down = false;
  isDown(): boolean {
    return this.down;
  }
}

class FakeComputeHealth extends ComputeHealth {
  down = false;
  isDown(): boolean {
    return this.down;
  }
}

describe('CheckReadiness', () => {
  let database: InMemoryDatabaseHealth;
  let redis: InMemoryRedisHealth;
  let check: CheckReadiness;
  let provider: FakeProviderHealth;
  let compute: FakeComputeHealth;

  beforeEach(() => {
    database = new InMemoryDatabaseHealth();
    redis = new InMemoryRedisHealth();
    provider = new FakeProviderHealth();
    compute = new FakeComputeHealth();
    check = new CheckReadiness(database, redis, provider, compute);
  });
  afterEach(() => jest.useRealTimers());

  it('is ready when the database is up and migrated and Redis is not configured', async () => {
    expect(await check.execute()).toEqual({ ready: true, checks: { database: 'ok', migrations: 'ok', redis: 'not_configured', provider: 'ok', compute_provider: 'ok' } });
  });

  it('stays ready and reports the storage provider down while its circuit is open', async () => {
    provider.down = true;
    expect(await check.execute()).toEqual({ ready: true, checks: { database: 'ok', migrations: 'ok', redis: 'not_configured', provider: 'down', compute_provider: 'ok' } });
  });

  it('stays ready and reports the compute provider down while its circuit is open (the storage provider apart)', async () => {
    compute.down = true;
    expect(await check.execute()).toEqual({ ready: true, checks: { database: 'ok', migrations: 'ok', redis: 'not_configured', provider: 'ok', compute_provider: 'down' } });
    provider.down = true;
    expect(await check.execute()).toEqual({ ready: true, checks: { database: 'ok', migrations: 'ok', redis: 'not_configured', provider: 'down', compute_provider: 'down' } });
  });

  it('is ready with a configured Redis that answers', async () => {
    redis.state = 'up';
    expect(await check.execute()).toEqual({ ready: true, checks: { database: 'ok', migrations: 'ok', redis: 'ok', provider: 'ok', compute_provider: 'ok' } });
  });

  it('is not ready while a migration is pending', async () => {
    database.pending = ['AddSomething1764000000000'];
    expect(await check.execute()).toEqual({ ready: false, checks: { database: 'ok', migrations: 'pending', redis: 'not_configured', provider: 'ok', compute_provider: 'ok' } });
  });

  it('is not ready when the database is down (migrations cannot be read either)', async () => {
    database.state = 'down';
    expect(await check.execute()).toEqual({ ready: false, checks: { database: 'error', migrations: 'error', redis: 'not_configured', provider: 'ok', compute_provider: 'ok' } });
  });

  it('stays ready with redis degraded when a configured Redis is unreachable (requests are served, limited in memory)', async () => {
    redis.state = 'down';
    expect(await check.execute()).toEqual({ ready: true, checks: { database: 'ok', migrations: 'ok', redis: 'degraded', provider: 'ok', compute_provider: 'ok' } });
  });

  it('gives up on a dependency that does not answer within the check timeout', async () => {
    jest.useFakeTimers();
    database.state = 'hanging';
    redis.state = 'down';
    const result = check.execute();
    await jest.advanceTimersByTimeAsync(CHECK_TIMEOUT_MS);
    expect(await result).toEqual({ ready: false, checks: { database: 'error', migrations: 'error', redis: 'degraded', provider: 'ok', compute_provider: 'ok' } });
  });
});
