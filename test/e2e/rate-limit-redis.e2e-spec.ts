import { scaled } from '../support/deadlines';
import { getStorageToken } from '@nestjs/throttler';
import Redis from 'ioredis';
import { FixedWindowRateLimitStorage } from '../../src/modules/auth/infrastructure/rate-limit.storage';
import { randomBase62 } from '../../src/shared/kernel/ids/ids';
import { createTestDatabase, TestDatabase } from '../support/database';
import { apiToken, bearer, organization, region } from '../support/fixtures';
import { ServerProcess, freePort, startServerProcess } from '../support/processes';
import { expectRateLimited } from '../support/assertions';
import { processHttp } from '../support/openapi-validation';
import { TestApp, startTestApp } from '../support/test-app';

const REDIS_URL = process.env.TEST_REDIS_URL;
const DATABASE_URL = process.env.DATABASE_URL;

if (!REDIS_URL) {
  // Shown in the test output, so a skipped run is not mistaken for a passing one.
  console.warn('rate-limit-redis.e2e-spec: TEST_REDIS_URL is not set; the Redis rate-limit tests are skipped (.ci/run sets it when Redis answers)');
} else if (!DATABASE_URL) {
  console.warn('rate-limit-redis.e2e-spec: DATABASE_URL is not set; the two-process test is skipped (two processes cannot share one embedded database)');
}

/** Removes every key of this run's prefix. */
async function dropKeys(redis: Redis, prefix: string): Promise<void> {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
}

const describeWithRedis = REDIS_URL ? describe : describe.skip;
const describeWithRedisAndPostgres = REDIS_URL && DATABASE_URL ? describe : describe.skip;

describeWithRedis('rate limits in Redis (TEST_REDIS_URL), one server process', () => {
  let t: TestApp;
  let redis: Redis;
  const prefix = `cds-test-${randomBase62(10)}:`;
  const token = apiToken('redis', 'rw');

  beforeAll(async () => {
    redis = new Redis(REDIS_URL!);
    t = await startTestApp({ redisUrl: REDIS_URL, redisKeyPrefix: prefix, rateLimitPerMinute: 3 });
    await t.seed({ regions: [region()], organizations: [organization('redis')] });
  });
  afterAll(async () => {
    await t?.close();
    if (redis) {
      await dropKeys(redis, prefix);
      await redis.quit();
    }
  });

  it('counts in one Redis key per credential with a 60 s expiry, and answers 429 past the limit', async () => {
    const storage = t.app.get<FixedWindowRateLimitStorage>(getStorageToken());
    expect(storage.usesRedis).toBe(true);
    const before = Date.now();
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await t.http.get('/v1/wallet').set(bearer(token));
      expect(res.status).toBe(200);
      remaining.push(res.headers['x-ratelimit-remaining']);
    }
    expect(remaining).toEqual(['2', '1', '0']);

    const [{ id: keyId }] = await t.sql<{ id: string }>("SELECT id FROM api_keys WHERE org_id = 'org_redis'");
    const redisKey = `${prefix}ratelimit:default:cred:${keyId}`;
    expect(await redis.keys(`${prefix}*`)).toEqual([redisKey]);
    expect(await redis.get(redisKey)).toBe('3');
    const ttl = await redis.pttl(redisKey);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);

    const limited = await t.http.get('/v1/regions').set(bearer(token));
    expectRateLimited(limited);
    expect(limited.headers['x-ratelimit-limit']).toBe('3');
    expect(limited.headers['x-ratelimit-remaining']).toBe('0');
    const reset = Number(limited.headers['x-ratelimit-reset']);
    expect(reset).toBeGreaterThanOrEqual(Math.floor(before / 1000));
    expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 60);

    // The window is Redis's: once the key expires, the full limit is back.
    await redis.pexpire(redisKey, 1);
    await new Promise((r) => setTimeout(r, 20));
    const next = await t.http.get('/v1/wallet').set(bearer(token));
    expect(next.status).toBe(200);
    expect(next.headers['x-ratelimit-remaining']).toBe('2');
  });

  it('closes its Redis connection when the application shuts down', async () => {
    const storage = t.app.get<FixedWindowRateLimitStorage>(getStorageToken());
    const other = await startTestApp({ redisUrl: REDIS_URL, redisKeyPrefix: prefix, rateLimitPerMinute: 3 });
    const otherStorage = other.app.get<FixedWindowRateLimitStorage>(getStorageToken());
    expect(otherStorage.redisStatus).toBe('ready');
    await other.close();
    expect(otherStorage.redisStatus).toBe('end');
    expect(storage.redisStatus).toBe('ready');
  });
});

describeWithRedisAndPostgres('rate limits shared through Redis by two server processes (TEST_REDIS_URL and DATABASE_URL)', () => {
  let db: TestDatabase;
  let redis: Redis;
  const servers: ServerProcess[] = [];
  const prefix = `cds-test-${randomBase62(10)}:`;

  beforeAll(async () => {
    redis = new Redis(REDIS_URL!);
    db = await createTestDatabase();
    const env = {
      DATABASE_URL: db.url,
      REDIS_URL,
      REDIS_KEY_PREFIX: prefix,
      RATE_LIMIT_PER_MINUTE: '5',
      DEMO_SEED: 'false',
      WORKER_ENABLED: 'false',
      DB_POOL_SIZE: '3',
    };
    // One after the other: the first applies the migrations. Each on a free port of its own.
    servers.push(await startServerProcess(env));
    servers.push(await startServerProcess({ ...env, MIGRATIONS_RUN: 'false' }));
  }, scaled(90_000));
  afterAll(async () => {
    for (const s of servers) await s.stop();
    await db?.drop();
    if (redis) {
      await dropKeys(redis, prefix);
      await redis.quit();
    }
  });

  it('spreads requests over both processes: one counter, the 6th request gets 429', async () => {
    const [a, b] = servers;
    expect(a.url).toMatch(/^http:\/\/localhost:\d+$/);
    expect(b.url).toMatch(/^http:\/\/localhost:\d+$/);
    expect(b.url).not.toBe(a.url);
    const signup = await (await processHttp(a.url)).post('/v1/auth/signup').send({ email: 'two@procs.test', password: 'a long password', organization_name: 'Two' });
    expect(signup.status).toBe(201);
    const token: string = signup.body.token;

    const seen: { server: string; status: number; remaining: string; reset: number }[] = [];
    for (let i = 0; i < 6; i++) {
      const server = i % 2 === 0 ? a : b;
      const res = await (await processHttp(server.url)).get('/v1/wallet').set(bearer(token));
      seen.push({ server: server.url, status: res.status, remaining: res.headers['x-ratelimit-remaining'], reset: Number(res.headers['x-ratelimit-reset']) });
      if (res.status === 429) {
        expect(res.body.error.code).toBe('rate_limited');
        expect(res.headers['retry-after']).toMatch(/^[1-9]\d*$/);
      }
    }
    expect(seen.map(({ server, status, remaining }) => ({ server, status, remaining }))).toEqual([
      { server: a.url, status: 200, remaining: '4' },
      { server: b.url, status: 200, remaining: '3' },
      { server: a.url, status: 200, remaining: '2' },
      { server: b.url, status: 200, remaining: '1' },
      { server: a.url, status: 200, remaining: '0' },
      { server: b.url, status: 429, remaining: '0' },
    ]);
    // Both processes report the end of the same window (to the second: each reads the TTL at its own time).
    const resets = seen.map((s) => s.reset);
    expect(Math.max(...resets) - Math.min(...resets)).toBeLessThanOrEqual(1);

    // Signup was counted in the client IP's bucket, the requests in the user's: one key each.
    expect((await redis.keys(`${prefix}*`)).sort()).toEqual([
      `${prefix}ratelimit:default:user:${signup.body.user.id}`,
      expect.stringMatching(new RegExp(`^${prefix}ratelimit:default:ip:`)),
    ].sort());
  });
});

describe('rate limits when Redis cannot be reached', () => {
  let t: TestApp;
  const token = apiToken('noredis', 'rw');

  beforeAll(async () => {
    // Nothing listens on this port (free when asked): every Redis command fails.
    t = await startTestApp({ redisUrl: `redis://127.0.0.1:${await freePort()}`, rateLimitPerMinute: 3 });
    await t.seed({ regions: [region()], organizations: [organization('noredis')] });
  });
  afterAll(async () => t?.close());

  it('keeps answering, and limits in this process\'s memory meanwhile (with the same headers)', async () => {
    const statuses: number[] = [];
    const remaining: string[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await t.http.get('/v1/wallet').set(bearer(token));
      statuses.push(res.status);
      remaining.push(res.headers['x-ratelimit-remaining']);
      expect(res.headers['x-ratelimit-limit']).toBe('3');
      expect(res.headers['x-ratelimit-reset']).toMatch(/^\d{10}$/);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(remaining).toEqual(['2', '1', '0', '0']);
  });
});
