import { OWNER_PASSWORD, organization, region } from '../support/fixtures';
import { TestApp, startTestApp } from '../support/test-app';

/**
 * Password guessing: the per-IP limit alone let 590 wrong passwords at one account through in
 * 16 s from a few addresses. Failed logins now count per account, across addresses and processes
 * (the audit log's auth.login_failed rows): after 5, each next attempt waits 1 s, 2 s, 4 s … at
 * most 60 s after the last failure (429 with Retry-After), and then the right password works:
 * a delay, never a lock the owner could be shut out by.
 */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('per-account login throttle (X-Forwarded-For behind a trusted proxy: many client addresses)', () => {
  let t: TestApp;
  const loginFrom = (ip: string, password: string, email = 'owner@thr.test') => t.http.post('/v1/auth/login').set('X-Forwarded-For', ip).send({ email, password });
  const failures = async () => Number((await t.sql<{ n: string }>(`SELECT count(*) AS n FROM audit_log WHERE action = 'auth.login_failed'`))[0].n);

  beforeAll(async () => {
    t = await startTestApp({ trustProxy: ['loopback'], rateLimitPerMinute: 1000 });
    await t.seed({ regions: [region()], organizations: [organization('thr'), organization('other'), organization('enum')] });
  });
  afterAll(async () => t?.close());

  it('five wrong passwords from five addresses, then 429 with Retry-After for the account from any address, even with the right password; after the wait the right one works', async () => {
    for (let i = 0; i < 5; i++) {
      const res = await loginFrom(`203.0.113.${i + 1}`, `wrong ${i}`);
      expect({ i, status: res.status, code: res.body.error?.code }).toEqual({ i, status: 401, code: 'invalid_credentials' });
    }
    expect(await failures()).toBe(5);

    const guess = await loginFrom('198.51.100.77', 'wrong again');
    expect(guess.status).toBe(429);
    expect(guess.headers['retry-after']).toBe('1');
    expect(guess.body).toEqual({
      error: {
        code: 'rate_limited',
        message: 'Too many failed logins for this email; retry after 1 seconds (Retry-After)',
        request_id: guess.headers['x-request-id'],
        details: {},
      },
    });
    // The per-IP headers are there too: a new address has its own, fresh, bucket.
    expect(guess.headers['x-ratelimit-remaining']).toBe('999');
    // Not tried, not counted: the attempt during the wait is no guess at all.
    expect(await failures()).toBe(5);
    const owner = await loginFrom('192.0.2.10', OWNER_PASSWORD);
    expect(owner.status).toBe(429);
    expect(await t.sql(`SELECT id FROM sessions`)).toEqual([]);

    // Another account is not affected.
    expect((await loginFrom('198.51.100.77', OWNER_PASSWORD, 'owner@other.test')).status).toBe(200);

    // After the delay: one more guess (wrong: the next delay doubles), then the owner gets in after it.
    await sleep(1100);
    expect((await loginFrom('203.0.113.50', 'wrong 6')).status).toBe(401);
    const soon = await loginFrom('203.0.113.51', 'wrong 7');
    expect(soon.status).toBe(429);
    expect(soon.headers['retry-after']).toBe('2');
    await sleep(2100);
    const back = await loginFrom('192.0.2.10', OWNER_PASSWORD);
    expect(back.status).toBe(200);
    expect(back.body.user.email).toBe('owner@thr.test');
  });

  it('an email without an account answers exactly as one with an account: 401 five times, then 429 with the same Retry-After and body', async () => {
    const sequence = async (email: string) => {
      const answer = (res: { status: number; headers: Record<string, string>; body: { error: object } }) => ({
        status: res.status,
        retryAfter: res.headers['retry-after'],
        body: { ...res.body, error: { ...res.body.error, request_id: undefined } },
      });
      const answers = [];
      for (let i = 0; i < 5; i++) answers.push(answer(await loginFrom(`203.0.113.${100 + i}`, `wrong ${i}`, email)));
      // The next three at once, within the 1 s the fifth failure costs.
      answers.push(...(await Promise.all([5, 6, 7].map((i) => loginFrom(`203.0.113.${100 + i}`, `wrong ${i}`, email)))).map(answer));
      return answers;
    };
    const [known, unknown] = await Promise.all([sequence('owner@enum.test'), sequence('Nobody@Enum.test')]);
    expect(known.map((a) => a.status)).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
    expect(unknown).toEqual(known);
    expect(known[5].retryAfter).toBe('1');
    // Counted per normalized email (any case), under a keyed hash: the address itself is not stored.
    expect((await loginFrom('203.0.113.120', 'wrong', 'NOBODY@enum.test')).status).toBe(429);
    const keys = await t.sql<{ target_id: string; n: number }>(
      `SELECT target_id, count(*)::int AS n FROM audit_log WHERE action = 'auth.login_failed' AND ip_address LIKE '203.0.113.1__' GROUP BY target_id ORDER BY target_id`,
    );
    expect(keys.map((k) => k.n)).toEqual([5, 5]);
    expect(keys.every((k) => /^login:[0-9a-f]{64}$/.test(k.target_id))).toBe(true);
    expect(JSON.stringify(await t.sql(`SELECT * FROM audit_log WHERE action = 'auth.login_failed'`))).not.toMatch(/nobody@enum/i);
  });
});
