import { Db } from '../../src/shared/database/transaction';
import { apiToken, bearer, organization, region } from '../support/fixtures';
import { TestApp, startTestApp } from '../support/test-app';

/**
 * Failed authentication counted per client address (X-Forwarded-For behind a trusted proxy: many
 * addresses from one test), and unknown tokens answered from a short negative cache.
 */
describe('failed authentication: 429 per address past 30 invalid tokens a minute; unknown tokens cost one query', () => {
  let t: TestApp;
  const valid = apiToken('fa', 'rw');
  const unknown = (i: number) => `cds_live_${`unknownfa${i}`.padEnd(40, 'x')}`;
  const wallet = (ip: string, token: string) => t.http.get('/v1/wallet').set('X-Forwarded-For', ip).set(bearer(token));

  beforeAll(async () => {
    t = await startTestApp({ trustProxy: ['loopback'], rateLimitPerMinute: 1000 });
    await t.seed({ regions: [region()], organizations: [organization('fa')] });
  });
  afterAll(async () => t?.close());

  /** The SQL statements the app runs while `during` runs (every statement goes through Db's exec). */
  async function statementsDuring<T>(during: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
    const db = t.app.get(Db) as unknown as { exec: (sql: string) => Promise<unknown> };
    const spy = jest.spyOn(db, 'exec');
    try {
      const result = await during();
      return { result, statements: spy.mock.calls.map(([sql]) => sql) };
    } finally {
      spy.mockRestore();
    }
  }

  const invalidToken = (res: { status: number; body: unknown; headers: Record<string, string> }) => {
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: { code: 'unauthorized', message: 'Invalid token', request_id: res.headers['x-request-id'], details: {} } });
  };

  it('a repeated unknown token is looked up once', async () => {
    const first = await statementsDuring(() => wallet('192.0.2.1', unknown(0)));
    invalidToken(first.result);
    expect(first.statements).toHaveLength(1);
    const again = await statementsDuring(() => wallet('192.0.2.1', unknown(0)));
    invalidToken(again.result);
    expect(again.statements).toEqual([]);
  });

  it('the 31st invalid token from one address within a minute is 429 with Retry-After, before any lookup; another address is served', async () => {
    const attacker = '203.0.113.9';
    for (let i = 1; i <= 30; i++) invalidToken(await wallet(attacker, unknown(i)));

    const refused = await statementsDuring(() => wallet(attacker, unknown(31)));
    const res = refused.result;
    expect(res.status).toBe(429);
    const retryAfter = Number(res.headers['retry-after']);
    expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
    expect(res.headers['x-ratelimit-limit']).toBe('30');
    expect(res.headers['x-ratelimit-remaining']).toBe('0');
    expect(Number(res.headers['x-ratelimit-reset']) - Math.floor(Date.now() / 1000)).toBeLessThanOrEqual(61);
    expect(res.body).toEqual({
      error: { code: 'rate_limited', message: `Too many invalid tokens from this address; retry after ${retryAfter} seconds (Retry-After)`, request_id: res.headers['x-request-id'], details: {} },
    });

    // Blocked: even a valid token from that address is refused without a look at it.
    const blocked = await statementsDuring(() => wallet(attacker, valid));
    expect(blocked.result.status).toBe(429);
    expect(blocked.result.body.error.code).toBe('rate_limited');
    expect(Number(blocked.result.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(blocked.statements).toEqual([]);

    // Another address with a valid token: served.
    const other = await wallet('198.51.100.7', valid);
    expect(other.status).toBe(200);
    expect(other.body).toEqual({
      balances: [
        { currency: 'USD', available: '100.00000', reserved: '0.00000' },
        { currency: 'IDR', available: '1500000', reserved: '0' },
      ],
    });
    // And another address with an invalid token still gets the plain 401.
    invalidToken(await wallet('198.51.100.8', unknown(32)));
  });
});
