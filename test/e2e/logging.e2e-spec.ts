import { scaled } from '../support/deadlines';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { TestDatabase, createTestDatabase } from '../support/database';
import { OWNER_PASSWORD, apiToken, organization, region } from '../support/fixtures';
import { validatedFetch } from '../support/openapi-validation';
import { ServerProcess, runCli, startServerProcess, tempDir } from '../support/processes';

type LogLine = Record<string, unknown>;

/**
 * Structured logs of a real server process at LOG_LEVEL=info with stdout piped (so JSON, not
 * pretty): one line per request with request_id (the server's own id) and client_request_id (the
 * client's X-Request-Id), route, status, latency and, when authenticated,
 * the organization and credential ids; and never a token, password or Authorization header.
 */
describe('structured request logs (spawned server, LOG_LEVEL=info)', () => {
  let db: TestDatabase;
  let dir: ReturnType<typeof tempDir>;
  let server: ServerProcess;
  let exitCode: number | null;
  let lines: LogLine[];
  let keyId: string;
  let unnamedRequestId: string | null;
  let sessionToken: string;
  const keyToken = apiToken('log', 'rw');
  const orgId = 'org_log';

  const request = (path: string, init: RequestInit & { headers?: Record<string, string> } = {}): Promise<Response> =>
    validatedFetch(`${server.url.replace('localhost', '127.0.0.1')}${path}`, init);

  const sql = async (text: string): Promise<void> => {
    const c = new Client({ connectionString: db.url });
    await c.connect();
    try {
      await c.query(text);
    } finally {
      await c.end();
    }
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    dir = tempDir('cds-logging-');
    const env = db.url ? { DATABASE_URL: db.url } : { DATA_DIR: join(dir.path, 'data') };
    const seedFile = join(dir.path, 'seed.json');
    writeFileSync(seedFile, JSON.stringify({ regions: [region()], organizations: [organization('log')] }));
    const seeded = runCli(['seed', seedFile], env);
    if (seeded.status !== 0) throw new Error(`seed failed: ${seeded.stderr}`);
    keyId = (JSON.parse(seeded.stdout) as { organizations: { api_keys: { id: string }[] }[] }).organizations[0].api_keys[0].id;

    server = await startServerProcess({ ...env, DEMO_SEED: 'false', LOG_LEVEL: 'info' });

    const login = await request('/v1/auth/login', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Request-Id': 'log-login-1' },
      body: JSON.stringify({ email: 'owner@log.test', password: OWNER_PASSWORD }),
    });
    expect(login.status).toBe(200);
    sessionToken = ((await login.json()) as { token: string }).token;

    const withSession = await request('/v1/wallet', { headers: { Authorization: `Bearer ${sessionToken}`, 'X-Request-Id': 'log-wallet-session' } });
    expect(withSession.status).toBe(200);
    const withKey = await request('/v1/wallet', { headers: { Authorization: `Bearer ${keyToken}`, 'X-Request-Id': 'log-wallet-key' } });
    expect(withKey.status).toBe(200);
    const unnamed = await request('/v1/wallet', { headers: { Authorization: `Bearer ${keyToken}` } });
    expect(unnamed.status).toBe(200);
    unnamedRequestId = unnamed.headers.get('x-request-id');
    const denied = await request('/v1/wallet', { headers: { Authorization: 'Bearer cds_live_notavalidtokennotavalidtoken0000', 'X-Request-Id': 'log-wallet-401' } });
    expect(denied.status).toBe(401);
    const wrongPassword = await request('/v1/auth/login', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Request-Id': 'log-login-401' },
      body: JSON.stringify({ email: 'owner@log.test', password: 'the wrong password!' }),
    });
    expect(wrongPassword.status).toBe(401);

    if (db.url) {
      // An unexpected failure (a table gone): the filter's error line must carry the request id.
      await sql('ALTER TABLE wallet_balances RENAME TO wallet_balances_gone');
      try {
        const failed = await request('/v1/wallet', { headers: { Authorization: `Bearer ${keyToken}`, 'X-Request-Id': 'log-wallet-500' } });
        expect(failed.status).toBe(500);
      } finally {
        await sql('ALTER TABLE wallet_balances_gone RENAME TO wallet_balances');
      }
    }

    exitCode = await server.stop('SIGTERM');
    lines = server
      .output()
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => {
        try {
          return JSON.parse(l) as LogLine;
        } catch {
          throw new Error(`not a JSON log line: ${l}`);
        }
      });
  }, scaled(120_000));

  afterAll(async () => {
    if (server) await server.stop('SIGKILL');
    await db?.drop();
    dir?.remove();
  });

  /** The request lines of the request that sent X-Request-Id `clientRequestId`. */
  const requestLines = (clientRequestId: string): LogLine[] => lines.filter((l) => l.client_request_id === clientRequestId && l.msg === 'request completed');
  const REQ_ID = /^req_[A-Za-z0-9]{20,}$/;

  it('writes only JSON lines, and the process exits 0 on SIGTERM', () => {
    expect(exitCode).toBe(0);
    expect(lines.length).toBeGreaterThan(5);
    expect(lines.every((l) => typeof l.level === 'string' && typeof l.time === 'string' && typeof l.msg === 'string')).toBe(true);
  });

  it('logs the login once, with request id, route, status and latency, and no credential yet', () => {
    expect(requestLines('log-login-1')).toEqual([
      {
        level: 'info',
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        pid: server.child.pid,
        hostname: expect.any(String),
        request_id: expect.stringMatching(REQ_ID),
        client_request_id: 'log-login-1',
        method: 'POST',
        path: '/v1/auth/login',
        route: '/v1/auth/login',
        status: 200,
        latency_ms: expect.any(Number),
        org_id: null,
        credential_id: null,
        msg: 'request completed',
      },
    ]);
  });

  it('logs authenticated requests with the organization and the credential (session or API key)', () => {
    const [session] = requestLines('log-wallet-session');
    expect(requestLines('log-wallet-session')).toHaveLength(1);
    expect(session).toEqual({
      level: 'info',
      time: expect.any(String),
      pid: server.child.pid,
      hostname: expect.any(String),
      request_id: expect.stringMatching(REQ_ID),
      client_request_id: 'log-wallet-session',
      method: 'GET',
      path: '/v1/wallet',
      route: '/v1/wallet',
      status: 200,
      latency_ms: expect.any(Number),
      org_id: orgId,
      credential_id: expect.stringMatching(/^ses_[A-Za-z0-9]{20,}$/),
      msg: 'request completed',
    });
    expect(requestLines('log-wallet-key')).toEqual([expect.objectContaining({ route: '/v1/wallet', status: 200, org_id: orgId, credential_id: keyId })]);
    expect(requestLines('log-wallet-401')).toEqual([expect.objectContaining({ route: '/v1/wallet', status: 401, org_id: null, credential_id: null })]);
    expect(requestLines('log-login-401')).toEqual([expect.objectContaining({ route: '/v1/auth/login', status: 401, org_id: null, credential_id: null })]);
  });

  it("gives every request its own request_id; without an X-Request-Id the response's generated one is it", () => {
    const completed = lines.filter((l) => l.msg === 'request completed');
    const ids = completed.map((l) => l.request_id);
    expect(ids.every((id) => typeof id === 'string' && REQ_ID.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(unnamedRequestId).toMatch(REQ_ID);
    expect(completed.filter((l) => l.request_id === unnamedRequestId)).toEqual([
      expect.objectContaining({ client_request_id: null, route: '/v1/wallet', status: 200, credential_id: keyId }),
    ]);
  });

  it('leaves no token, password or Authorization header in the logs', () => {
    const text = server.output();
    expect(sessionToken).toMatch(/^cds_sess_/);
    for (const secret of [sessionToken, keyToken, 'cds_live_notavalidtokennotavalidtoken0000', OWNER_PASSWORD, 'the wrong password!', 'Bearer']) {
      expect(text).not.toContain(secret);
    }
    expect(text).not.toMatch(/authorization/i);
    expect(text).not.toMatch(/cds_(live|sess)_/);
  });

  it('logs the shutdown', () => {
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ level: 'info', context: 'Shutdown', signal: 'SIGTERM', msg: 'shutdown started: no new connections; waiting for requests in flight' }),
        expect.objectContaining({ level: 'info', context: 'Shutdown', msg: 'shutdown complete' }),
      ]),
    );
  });

  (process.env.DATABASE_URL ? it : it.skip)('logs an unexpected failure through pino with the request id (PostgreSQL only: needs SQL on the running database)', () => {
    const failure = lines.filter((l) => l.client_request_id === 'log-wallet-500');
    expect(failure).toEqual([
      expect.objectContaining({
        level: 'error',
        context: 'HttpExceptionFilter',
        msg: 'unexpected exception',
        method: 'GET',
        path: '/v1/wallet',
        err: expect.objectContaining({ name: 'QueryFailedError', message: expect.stringContaining('wallet_balances') }),
      }),
      expect.objectContaining({ level: 'error', msg: 'request failed', route: '/v1/wallet', status: 500, org_id: orgId, credential_id: keyId }),
    ]);
    // Both lines carry the server's one id of that request.
    expect(failure[0].request_id).toMatch(REQ_ID);
    expect(failure[1].request_id).toBe(failure[0].request_id);
  });
});
