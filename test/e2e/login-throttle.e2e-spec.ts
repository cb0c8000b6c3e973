import { FixedClock } from '../../src/shared/kernel/clock/clock';
import { OWNER_PASSWORD, organization, region } from '../support/fixtures';
import { TestApp, startTestApp } from '../support/test-app';

/**
 * Password guessing: the per-IP limit alone let 590 wrong passwords at one account through in
 * 16 s from a few addresses. Failed logins now count per account, across addresses and processes
 * (the audit log's auth.login_failed rows): after 5, each next attempt waits 1 s, 2 s, 4 s … at
 * most 60 s after the last failure (429 with Retry-After), and then the right password works:
 * a delay, never a lock the owner could be shut out by.
 *
 * The database stamps the failures; the app's clock, fixed here, says how long ago that was: each
 * case sets it just after the last failure or at the end of the wait, so that the answers do not
 * depend on how long the requests took on a busy machine.
 */

describe('per-account login throttle (X-Forwarded-For behind a trusted proxy: many client addresses)', () => {
  let t: TestApp;
  const clock = new FixedClock(new Date());
  /**
   * When the last failed login was recorded (the database's clock, in microseconds), in ms since
   * the epoch, rounded up: the throttle counts whole milliseconds since then, so `at + 999` is
   * still within a 1 s wait and `at + 1000` is past it, whatever the microseconds were.
   */
  const lastFailureAt = async () =>
    Number((await t.sql<{ ms: string }>(`SELECT ceil(extract(epoch FROM max(created_at)) * 1000)::bigint::text AS ms FROM audit_log WHERE action = 'auth.login_failed'`))[0].ms);
  const clockAt = (ms: number) => clock.set(new Date(ms));
  const loginFrom = (ip: string, password: string, email = 'owner@thr.test') => t.http.post('/v1/auth/login').set('X-Forwarded-For', ip).send({ email, password });
  const failures = async () => Number((await t.sql<{ n: string }>(`SELECT count(*) AS n FROM audit_log WHERE action = 'auth.login_failed'`))[0].n);

  beforeAll(async () => {
    t = await startTestApp({ trustProxy: ['loopback'], rateLimitPerMinute: 1000 }, clock);
    clock.set(new Date());
    await t.seed({ regions: [region()], organizations: [organization('thr'), organization('other'), organization('enum')] });
  });
  afterAll(async () => t?.close());

  it('five wrong passwords from five addresses, then 429 with Retry-After for the account from any address, even with the right password; after the wait the right one works', async () => {
    for (let i = 0; i < 5; i++) {
      const res = await loginFrom(`203.0.113.${i + 1}`, `wrong ${i}`);
      expect({ i, status: res.status, code: res.body.error?.code }).toEqual({ i, status: 401, code: 'invalid_credentials' });
    }
    expect(await failures()).toBe(5);
    const fifth = await lastFailureAt();
    clockAt(fifth + 100);

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

    // 1 ms before the end of the delay it still waits; at its end, one more guess (wrong: the next
    // delay doubles), then the owner gets in after that one.
    clockAt(fifth + 999);
    const last = await loginFrom('203.0.113.49', 'wrong 5');
    expect({ status: last.status, retryAfter: last.headers['retry-after'] }).toEqual({ status: 429, retryAfter: '1' });
    clockAt(fifth + 1000);
    expect((await loginFrom('203.0.113.50', 'wrong 6')).status).toBe(401);
    const sixth = await lastFailureAt();
    clockAt(sixth + 100);
    const soon = await loginFrom('203.0.113.51', 'wrong 7');
    expect(soon.status).toBe(429);
    expect(soon.headers['retry-after']).toBe('2');
    expect(await failures()).toBe(6);
    clockAt(sixth + 2000);
    const back = await loginFrom('192.0.2.10', OWNER_PASSWORD);
    expect(back.status).toBe(200);
    expect(back.body.user.email).toBe('owner@thr.test');
  });

  it('a wait ends once it has wholly passed: failures stamped half a millisecond into a millisecond still wait 999.5 ms after, and not 1000.5 ms after', async () => {
    const email = 'half@edge.test';
    for (let i = 0; i < 5; i++) expect((await loginFrom(`203.0.113.${60 + i}`, `wrong ${i}`, email)).status).toBe(401);
    // The database stamps in microseconds: move the five to 500 µs into the millisecond `at` (the
    // log refuses updates: the test lifts that for this setup only).
    const at = Date.parse('2026-11-29T10:00:00.000Z');
    await t.sql(`ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_update`);
    try {
      const moved = await t.sql(
        `WITH m AS (UPDATE audit_log SET created_at = to_timestamp($1::numeric / 1000000)
                     WHERE action = 'auth.login_failed' AND ip_address LIKE '203.0.113.6_' RETURNING created_at)
         SELECT count(*)::int AS n, min(extract(microseconds FROM created_at))::int % 1000 AS micros FROM m`,
        [String(BigInt(at) * 1000n + 500n)],
      );
      expect(moved).toEqual([{ n: 5, micros: 500 }]);
    } finally {
      await t.sql(`ALTER TABLE audit_log ENABLE TRIGGER audit_log_no_update`);
    }
    clockAt(at + 1000); // 999.5 ms after them
    const early = await loginFrom('203.0.113.70', 'wrong 5', email);
    expect({ status: early.status, retryAfter: early.headers['retry-after'], code: early.body.error?.code }).toEqual({ status: 429, retryAfter: '1', code: 'rate_limited' });
    clockAt(at + 1001); // 1000.5 ms after them
    const past = await loginFrom('203.0.113.71', 'wrong 6', email);
    expect({ status: past.status, code: past.body.error?.code }).toEqual({ status: 401, code: 'invalid_credentials' });
  });

  it('an email without an account answers exactly as one with an account: 401 five times, then 429 with the same Retry-After and body', async () => {
    const answer = (res: { status: number; headers: Record<string, string>; body: { error: object } }) => ({
      status: res.status,
      retryAfter: res.headers['retry-after'],
      body: { ...res.body, error: { ...res.body.error, request_id: undefined } },
    });
    const emails = ['owner@enum.test', 'Nobody@Enum.test'];
    const [known, unknown]: ReturnType<typeof answer>[][] = [[], []];
    // Both emails side by side, one attempt each at a time (their fifth failures come together).
    for (let i = 0; i < 5; i++) {
      const [k, u] = await Promise.all(emails.map((email) => loginFrom(`203.0.113.${100 + i}`, `wrong ${i}`, email)));
      known.push(answer(k));
      unknown.push(answer(u));
    }
    // The next three of each at once, within the 1 s the fifth failure costs (the clock just after it).
    clockAt((await lastFailureAt()) + 1);
    const [k3, u3] = await Promise.all(emails.map((email) => Promise.all([5, 6, 7].map((i) => loginFrom(`203.0.113.${100 + i}`, `wrong ${i}`, email)))));
    known.push(...k3.map(answer));
    unknown.push(...u3.map(answer));
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
