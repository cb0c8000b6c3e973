import { scaled } from '../support/deadlines';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { TestDatabase, createTestDatabase } from '../support/database';
import { ServerProcess, startServerProcess, tempDir } from '../support/processes';

/**
 * Issue 9, HIGH: a 1 MB JSON body of ~70,000 unknown members to signup or login used to block
 * the whole process for seconds (class-transformer de-duplicates member names quadratically,
 * before the whitelist dropped them). The server runs in a process of its own, so that the
 * test's clock measures the server's event loop, not its own.
 */

interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
}

/** POST of a JSON body prepared as bytes (node:http: cheap for the test process to send 1 MB). */
function post(url: string, path: string, body: string | Buffer): Promise<Answer> {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'Content-Length': bytes.length } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const headers = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') headers.set(k, v);
        resolve({ status: res.statusCode!, headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      });
    });
    req.on('error', reject);
    req.end(bytes);
  });
}

/** A signup (or login) body with `unknown` extra members besides the real ones, as bytes. */
function bodyWithUnknownMembers(real: Record<string, string>, unknown: number): Buffer {
  const extra = Array.from({ length: unknown }, (_, i) => `"m${i}":${i}`);
  const text = JSON.stringify(real);
  return Buffer.from(unknown === 0 ? text : `${text.slice(0, -1)},${extra.join(',')}}`);
}

/**
 * Sends `request` and, while it is in flight, GET /v1/health one after the other (every 10 ms);
 * returns the request's answer and how long each health check took, in ms.
 */
async function withHealthChecks(url: string, request: () => Promise<Answer>): Promise<{ answer: Answer; healthMs: number[] }> {
  let done = false;
  const healthMs: number[] = [];
  const probing = (async () => {
    while (!done) {
      const t0 = performance.now();
      const res = await fetch(`${url}/v1/health`);
      await res.text();
      healthMs.push(performance.now() - t0);
      expect(res.status).toBe(200);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  // Let the first health check reach the server before the large body.
  await new Promise((r) => setTimeout(r, 20));
  const answer = await request().finally(() => {
    done = true;
  });
  await probing;
  return { answer, healthMs };
}

/**
 * The slowest of 20 health checks on an idle server, in ms: what this machine adds to any request
 * right now (it is shared and often loaded). The 100 ms budget is counted above it.
 */
async function idleHealthMs(url: string): Promise<number> {
  let max = 0;
  for (let i = 0; i < 20; i++) {
    const t0 = performance.now();
    await (await fetch(`${url}/v1/health`)).text();
    max = Math.max(max, performance.now() - t0);
  }
  return max;
}

const tooLarge = (requestId: string | null) => ({
  error: { code: 'invalid_request', message: 'Request body is larger than 16 KiB', request_id: requestId, details: {} },
});

const tooManyMembers = (requestId: string | null) => ({
  error: {
    code: 'invalid_request',
    message: 'Request body has more than 1000 members (object members and array elements, at every level)',
    request_id: requestId,
    details: { field: 'body' },
  },
});

describe('JSON bodies with very many members (a server process)', () => {
  let db: TestDatabase;
  let dir: ReturnType<typeof tempDir>;
  let server: ServerProcess;

  beforeAll(async () => {
    db = await createTestDatabase();
    dir = tempDir('cds-body-limits-');
    const env = db.url ? { DATABASE_URL: db.url } : { DATA_DIR: join(dir.path, 'data') };
    // A generous start timeout: on a loaded machine the embedded engine takes long to start.
    server = await startServerProcess({ ...env, DEMO_SEED: 'false', WORKER_ENABLED: 'false', RATE_LIMIT_PER_MINUTE: '1000' }, 100_000);
  }, scaled(120_000));
  afterAll(async () => {
    await server?.stop('SIGKILL');
    await db?.drop();
    dir?.remove();
  });

  it('signup with 70,000 unknown members (about 1 MB): 413 (over the 16 KiB of anonymous routes), and a concurrent health check answers within 100 ms', async () => {
    const body = bodyWithUnknownMembers({ email: 'big@body.test', password: 'a long password', organization_name: 'Big' }, 70_000);
    expect(body.length).toBeGreaterThan(700_000);
    expect(body.length).toBeLessThan(1024 * 1024);

    const idle = await idleHealthMs(server.url);
    const { answer, healthMs } = await withHealthChecks(server.url, () => post(server.url, '/v1/auth/signup', body));
    expect(answer.status).toBe(413);
    expect(answer.body).toEqual(tooLarge(answer.headers.get('x-request-id')));
    expect(healthMs.length).toBeGreaterThanOrEqual(1);
    // Within 100 ms of what an idle server takes here (the body used to block the process for 4 to 7 s).
    expect(Math.max(...healthMs)).toBeLessThan(100 + idle);

    // Nothing was written: the email is free.
    const login = await post(server.url, '/v1/auth/login', JSON.stringify({ email: 'big@body.test', password: 'a long password' }));
    expect(login.status).toBe(401);
    const signup = await post(server.url, '/v1/auth/signup', JSON.stringify({ email: 'big@body.test', password: 'a long password', organization_name: 'Big' }));
    expect(signup.status).toBe(201);
  });

  it('login with 70,000 unknown members: 413, and a concurrent health check answers within 100 ms', async () => {
    const body = bodyWithUnknownMembers({ email: 'big@body.test', password: 'a long password' }, 70_000);
    const idle = await idleHealthMs(server.url);
    const { answer, healthMs } = await withHealthChecks(server.url, () => post(server.url, '/v1/auth/login', body));
    expect(answer.status).toBe(413);
    expect(answer.body).toEqual(tooLarge(answer.headers.get('x-request-id')));
    expect(healthMs.length).toBeGreaterThanOrEqual(1);
    // Within 100 ms of what an idle server takes here (the body used to block the process for 4 to 7 s).
    expect(Math.max(...healthMs)).toBeLessThan(100 + idle);
  });

  it('counts members at every level: 1,000 are read (then the first unknown one is named), 1,001 are refused unread', async () => {
    // 3 real members + 997 unknown = 1,000: within the limit, so the validation names the first unknown member.
    const ok = await post(server.url, '/v1/auth/signup', bodyWithUnknownMembers({ email: 'edge@body.test', password: 'a long password', organization_name: 'Edge' }, 997));
    expect(ok.status).toBe(400);
    expect((ok.body as { error: unknown }).error).toEqual(expect.objectContaining({ code: 'invalid_request', details: { field: 'm0' } }));

    const over = await post(server.url, '/v1/auth/signup', bodyWithUnknownMembers({ email: 'over@body.test', password: 'a long password', organization_name: 'Over' }, 998));
    expect(over.status).toBe(400);
    expect(over.body).toEqual(tooManyMembers(over.headers.get('x-request-id')));

    // Nested: an unknown member holding an array of 1,000 elements is 1,001+ members too.
    const nested = await post(
      server.url,
      '/v1/auth/login',
      JSON.stringify({ email: 'edge@body.test', password: 'a long password', extra: Array.from({ length: 1000 }, (_, i) => i) }),
    );
    expect(nested.status).toBe(400);
    expect(nested.body).toEqual(tooManyMembers(nested.headers.get('x-request-id')));
  });

  it('refuses an unknown member with 400 naming it (a typo must not pass unseen), and logs nobody in', async () => {
    const res = await post(
      server.url,
      '/v1/auth/login',
      JSON.stringify({ email: 'edge@body.test', password: 'a long password', remember_me: true, client: { name: 'cli', version: '1.2' } }),
    );
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: {
        code: 'invalid_request',
        message: 'remember_me is not a member of this request body (check its spelling: unknown members are refused)',
        request_id: res.headers.get('x-request-id'),
        details: { field: 'remember_me' },
      },
    });
  });
});
