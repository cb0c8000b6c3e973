import { DataSource } from 'typeorm';
import { waitFor } from '../support/renewals';
import { TestApp, startTestApp } from '../support/test-app';

const READY = { status: 'ready', checks: { database: 'ok', migrations: 'ok', redis: 'not_configured', provider: 'ok', compute_provider: 'ok' } };

describe('GET /v1/health and GET /v1/ready', () => {
  let t: TestApp;

  beforeAll(async () => {
    // A tiny rate limit, to show that the probes are not counted against it.
    t = await startTestApp({ rateLimitPerMinute: 2 });
  });
  afterAll(async () => t?.close());

  it('health answers 200 {status: ok} without a token, uncached, with a request id and no rate-limit headers', async () => {
    const res = await t.http.get('/v1/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['x-request-id']).toMatch(/^req_[A-Za-z0-9]{24}$/);
    expect(res.headers['x-ratelimit-limit']).toBeUndefined();
  });

  it('ready answers 200 with every check ok when the database is up and migrated (Redis not configured)', async () => {
    const res = await t.http.get('/v1/ready');
    expect(res.status).toBe(200);
    expect(res.body).toEqual(READY);
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('ready stays 200 and reports the storage and compute providers down while PROVIDER_DOWN holds (their probes open the circuits within about 5 s), ok again once they answer', async () => {
    const checks = async () => (await t.http.get('/v1/ready')).body.checks as Record<string, string>;
    t.settings.providerDown = true;
    try {
      await waitFor('the circuits to open', async () => {
        const c = await checks();
        return c.provider === 'down' && c.compute_provider === 'down';
      }, 15_000, 200);
      const res = await t.http.get('/v1/ready');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'ready', checks: { ...READY.checks, provider: 'down', compute_provider: 'down' } });
    } finally {
      t.settings.providerDown = false;
    }
    await waitFor('the circuits to close', async () => {
      const c = await checks();
      return c.provider === 'ok' && c.compute_provider === 'ok';
    }, 15_000, 200);
    expect((await t.http.get('/v1/ready')).body).toEqual(READY);
  });

  it('neither probe counts against the rate limit, which still applies to other routes', async () => {
    for (let i = 0; i < 5; i++) {
      expect((await t.http.get('/v1/health')).status).toBe(200);
      expect((await t.http.get('/v1/ready')).status).toBe(200);
    }
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      statuses.push((await t.http.post('/v1/auth/login').send({ email: 'nobody@example.test', password: 'not the password' })).status);
    }
    expect(statuses).toEqual([401, 401, 429]);
    expect((await t.http.get('/v1/health')).status).toBe(200);
    expect((await t.http.get('/v1/ready')).body).toEqual(READY);
  });

  it('answers HEAD and refuses other methods with 405', async () => {
    expect((await t.http.head('/v1/health')).status).toBe(200);
    const post = await t.http.post('/v1/ready');
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
  });

  it('ready answers 503 not_ready while a migration of this build is not applied, and 200 again once it is', async () => {
    const [row] = await t.sql<{ timestamp: string; name: string }>('SELECT timestamp::text AS timestamp, name FROM schema_migrations ORDER BY id LIMIT 1');
    await t.sql('DELETE FROM schema_migrations WHERE name = $1', [row.name]);
    try {
      const res = await t.http.get('/v1/ready');
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ status: 'not_ready', checks: { database: 'ok', migrations: 'pending', redis: 'not_configured', provider: 'ok', compute_provider: 'ok' } });
      // Liveness is about the process only.
      expect((await t.http.get('/v1/health')).status).toBe(200);
    } finally {
      await t.sql('INSERT INTO schema_migrations (timestamp, name) VALUES ($1, $2)', [row.timestamp, row.name]);
    }
    const again = await t.http.get('/v1/ready');
    expect(again.status).toBe(200);
    expect(again.body).toEqual(READY);
  });

  it('ready answers 503 when the database is unreachable; health still answers 200', async () => {
    await t.app.get(DataSource).destroy();
    const res = await t.http.get('/v1/ready');
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ status: 'not_ready', checks: { database: 'error', migrations: 'error', redis: 'not_configured', provider: 'ok', compute_provider: 'ok' } });
    const health = await t.http.get('/v1/health');
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: 'ok' });
  });
});

describe('GET /v1/ready with Redis configured', () => {
  it('stays 200 with redis degraded when Redis refuses connections (requests are served, limited in memory)', async () => {
    // Port 1 on loopback: nothing listens there, the connection is refused at once.
    const t = await startTestApp({ redisUrl: 'redis://127.0.0.1:1' });
    try {
      const res = await t.http.get('/v1/ready');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'ready', checks: { database: 'ok', migrations: 'ok', redis: 'degraded', provider: 'ok', compute_provider: 'ok' } });
    } finally {
      await t.close();
    }
  });

  const redisUrl = process.env.TEST_REDIS_URL;
  (redisUrl ? it : it.skip)('reports redis ok and 200 when rate limits are counted in Redis (needs TEST_REDIS_URL)', async () => {
    const t = await startTestApp({ redisUrl });
    try {
      const res = await t.http.get('/v1/ready');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'ready', checks: { database: 'ok', migrations: 'ok', redis: 'ok', provider: 'ok', compute_provider: 'ok' } });
    } finally {
      await t.close();
    }
  });
  if (!redisUrl) {
    it('skips the reachable-Redis case: set TEST_REDIS_URL=redis://127.0.0.1:6379 to run it', () => undefined);
  }
});
