import { join } from 'node:path';
import { createTestDatabase, TestDatabase } from '../support/database';
import { validatedFetch } from '../support/openapi-validation';
import { startServerProcess, tempDir } from '../support/processes';

/**
 * What a new user sees: `npm start` on an empty database applies the migrations, loads the demo
 * data and prints a curl command that answers 200; a second start seeds nothing.
 */
describe('first run', () => {
  let db: TestDatabase;
  let dir: ReturnType<typeof tempDir>;
  let env: Record<string, string | undefined>;

  beforeAll(async () => {
    db = await createTestDatabase();
    dir = tempDir('cds-first-run-');
    env = db.url ? { DATABASE_URL: db.url } : { DATA_DIR: join(dir.path, 'nested', 'data') };
  });
  afterAll(async () => {
    await db?.drop();
    dir?.remove();
  });

  it('seeds the demo data once and prints a working curl command', async () => {
    const first = await startServerProcess({ ...env, WORKER_ENABLED: 'false', DEMO_SEED: undefined });
    let token: string;
    try {
      // Wait for the demo text, printed right after the listening line.
      for (let i = 0; i < 50 && !/curl -s/.test(first.output()); i++) await new Promise((r) => setTimeout(r, 100));
      const match = /curl -s (http:\/\/localhost:\d+)(\/v1\/\S+) -H "Authorization: Bearer (cds_live_[A-Za-z0-9]{32,})"/.exec(first.output());
      expect(match).not.toBeNull();
      const [, base, path, printedToken] = match!;
      token = printedToken;
      expect(base).toBe(first.url);
      const res = await validatedFetch(base + path, { headers: { Authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.headers.get('x-request-id')).toMatch(/^req_/);
      const body = (await res.json()) as { volumes?: { id: string }[] };
      if (path === '/v1/volumes') {
        expect(body.volumes!.map((v) => v.id).sort()).toEqual(['vol_demoarchive1', 'vol_demodata1', 'vol_demodb1']);
      } else {
        expect(path).toBe('/v1/wallet');
      }
      const wallet = await validatedFetch(`${base}/v1/wallet`, { headers: { Authorization: `Bearer ${token}` } });
      expect(await wallet.json()).toEqual({
        balances: [
          { currency: 'USD', available: '100.00000', reserved: '0.00000' },
          { currency: 'IDR', available: '1500000', reserved: '0' },
        ],
      });
    } finally {
      await first.stop();
    }

    const second = await startServerProcess({ ...env, WORKER_ENABLED: 'false', DEMO_SEED: undefined });
    try {
      await new Promise((r) => setTimeout(r, 300));
      expect(second.output()).not.toMatch(/Demo data loaded|curl -s/);
      // The data of the first run is still there, and the first key still works.
      const wallet = await validatedFetch(`${second.url}/v1/wallet`, { headers: { Authorization: `Bearer ${token}` } });
      expect(wallet.status).toBe(200);
    } finally {
      await second.stop();
    }
  });

  it('under NODE_ENV=production (the Docker image) starts empty: no demo owner with its public password', async () => {
    const own = await createTestDatabase();
    const ownDir = tempDir('cds-first-run-prod-');
    const ownEnv = own.url ? { DATABASE_URL: own.url } : { DATA_DIR: join(ownDir.path, 'data') };
    try {
      const server = await startServerProcess({ ...ownEnv, NODE_ENV: 'production', IDEMPOTENCY_SECRET: 'i'.repeat(32), WEBHOOK_SECRETS_KEY: 'w'.repeat(32), DEPLOYMENT_SECRETS_KEY: 'd'.repeat(32), WORKER_ENABLED: 'false', DEMO_SEED: undefined });
      try {
        await new Promise((r) => setTimeout(r, 300));
        expect(server.output()).not.toMatch(/Demo data loaded|curl -s/);
        const login = await fetch(`${server.url}/v1/auth/login`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ email: 'owner@demo.test', password: 'demo password 123' }),
        });
        expect(login.status).toBe(401);
        expect(((await login.json()) as { error: { code: string } }).error.code).toBe('invalid_credentials');
      } finally {
        await server.stop();
      }
    } finally {
      await own.drop();
      ownDir.remove();
    }
  });

  // Only the embedded engine has a data directory to lock.
  const itEmbedded = process.env.DATABASE_URL ? it.skip : it;
  itEmbedded('refuses a second process on the same embedded data directory with a clear message', async () => {
    const one = await startServerProcess({ ...env, WORKER_ENABLED: 'false', DEMO_SEED: 'false' });
    try {
      await expect(startServerProcess({ ...env, WORKER_ENABLED: 'false', DEMO_SEED: 'false' })).rejects.toThrow(
        /exited with 1 before listening:[\s\S]*The embedded database in .* is in use by process \d+/,
      );
    } finally {
      await one.stop();
    }
  });
});
