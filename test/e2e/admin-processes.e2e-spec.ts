import { TestDatabase, createTestDatabase, usingPostgres } from '../support/database';
import { scaled } from '../support/deadlines';
import { ServerProcess, freePort, runCli, startServerProcess } from '../support/processes';

/**
 * admin.md "Staff and tokens", across processes: two real server processes (node
 * dist/src/main.js) with their admin listeners on one PostgreSQL database. A staff member
 * disabled through one process is refused by the other within a second (each process reads a
 * token's row at most once a second).
 */
const describeOnPostgres = usingPostgres() ? describe : describe.skip;
if (!usingPostgres()) {
  console.log('admin-processes.e2e-spec: skipped, needs DATABASE_URL (PostgreSQL); two processes cannot share the embedded engine');
}

describeOnPostgres('admin API across two server processes (PostgreSQL)', () => {
  let db: TestDatabase;
  let a: ServerProcess & { admin: string };
  let b: ServerProcess & { admin: string };
  let superadmin: string;

  const call = async (p: { admin: string }, method: string, path: string, token: string, opts: { body?: unknown; key?: string } = {}) => {
    const headers: Record<string, string> = { Authorization: `Bearer ${token}` };
    if (opts.key) headers['Idempotency-Key'] = opts.key;
    if (opts.body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(`${p.admin}${path}`, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const start = async (): Promise<ServerProcess & { admin: string }> => {
    const port = await freePort();
    const p = await startServerProcess({ DATABASE_URL: db.url, DEMO_SEED: 'false', WORKER_ENABLED: 'false', ADMIN_PORT: String(port), ADMIN_HOST: '127.0.0.1' });
    return Object.assign(p, { admin: `http://127.0.0.1:${port}` });
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    a = await start();
    b = await start();
    const created = runCli(['staff:create', '--email', 'root@staff.test', '--name', 'Root', '--role', 'superadmin'], { DATABASE_URL: db.url, LOG_LEVEL: 'error' });
    expect(created.status).toBe(0);
    superadmin = JSON.parse(created.stdout).token;
  }, scaled(120_000));
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await db?.drop();
  });

  it('a staff member disabled on one process is refused by the other within 1 s', async () => {
    const made = await call(a, 'POST', '/admin/v1/staff', superadmin, { key: 'mk-1', body: { email: 'temp@staff.test', name: 'Temp', role: 'support' } });
    expect(made.status).toBe(201);
    const token: string = made.body.token;
    // The other process has read (and cached) the token.
    expect((await call(b, 'GET', '/admin/v1/operations', token)).status).toBe(200);
    const disabled = await call(a, 'DELETE', `/admin/v1/staff/${made.body.staff.id}`, superadmin, { key: 'dk-1' });
    expect(disabled.status).toBe(200);
    const at = Date.now();
    let refused: { status: number; body: { error: { code: string } } } | undefined;
    while (Date.now() - at < scaled(3000)) {
      const r = await call(b, 'GET', '/admin/v1/operations', token);
      if (r.status !== 200) {
        refused = r;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const elapsed = Date.now() - at;
    expect(refused?.status).toBe(401);
    expect(refused?.body.error.code).toBe('unauthorized');
    // The cache keeps a token's row at most 1 s; the margin is the polling and the machine's load.
    expect(elapsed).toBeLessThanOrEqual(1000 + scaled(250));
    // And on the process that disabled it, at once or within the same second.
    expect((await call(a, 'GET', '/admin/v1/operations', token)).status).toBe(401);
  });
});
