import type { Response } from 'supertest';
import { Clock } from '../../src/shared/kernel/clock/clock';
import { OWNER_PASSWORD, apiToken, bearer, organization, region } from '../support/fixtures';
import { expectRateLimited } from '../support/assertions';
import { TestApp, startTestApp } from '../support/test-app';

/** Real time plus an offset the test moves forward: every test starts in fresh 60 s windows. */
class OffsetClock extends Clock {
  private offsetMs = 0;
  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }
  advance(ms: number): void {
    this.offsetMs += ms;
  }
}

const LIMIT = 5;

const rateHeaders = (res: Response) => ({
  limit: res.headers['x-ratelimit-limit'],
  remaining: res.headers['x-ratelimit-remaining'],
  reset: res.headers['x-ratelimit-reset'],
});

describe('rate limits (in memory): per credential, fixed 60 s windows, headers on every authenticated response', () => {
  let t: TestApp;
  const clock = new OffsetClock();
  const rw = apiToken('rl', 'rw');
  const ro = apiToken('rl', 'ro');
  const other = apiToken('rl', 'other');
  let viewerSession: string;

  /** Asserts X-RateLimit-Reset is a Unix time (seconds) inside the window opened at or after `windowOpenedMs`. */
  const expectResetWithinWindow = (res: Response, windowOpenedMs: number, afterMs: number): number => {
    const reset = res.headers['x-ratelimit-reset'];
    expect(reset).toMatch(/^\d+$/);
    const value = Number(reset);
    expect(value).toBeGreaterThanOrEqual(Math.floor(windowOpenedMs / 1000));
    expect(value).toBeLessThanOrEqual(Math.ceil(afterMs / 1000) + 60);
    return value;
  };

  beforeAll(async () => {
    t = await startTestApp({ rateLimitPerMinute: LIMIT }, clock);
    await t.seed({
      regions: [region()],
      organizations: [
        organization('rl', {
          members: [
            { email: 'owner@rl.test', password: OWNER_PASSWORD, role: 'owner' },
            { email: 'viewer@rl.test', password: OWNER_PASSWORD, role: 'viewer' },
          ],
          api_keys: [
            { name: 'rw', scopes: ['vm:read', 'vm:write'], token: rw },
            { name: 'ro', scopes: ['vm:read'], token: ro },
            { name: 'other', scopes: ['vm:read'], token: other },
          ],
        }),
      ],
    });
    const login = await t.http.post('/v1/auth/login').send({ email: 'viewer@rl.test', password: OWNER_PASSWORD });
    expect(login.status).toBe(200);
    viewerSession = login.body.token;
  });
  beforeEach(() => clock.advance(61_000));
  afterAll(async () => t?.close());

  it('reports Limit, a decreasing Remaining and one Reset (Unix seconds, end of the current window) on successes', async () => {
    const before = clock.now().getTime();
    const first = await t.http.get('/v1/wallet').set(bearer(rw));
    const after = clock.now().getTime();
    expect(first.status).toBe(200);
    expect(rateHeaders(first)).toEqual({ limit: '5', remaining: '4', reset: expect.stringMatching(/^\d{10}$/) });
    const reset = expectResetWithinWindow(first, before, after);

    const second = await t.http.get('/v1/wallet').set(bearer(rw));
    const third = await t.http.get('/v1/regions').set(bearer(rw));
    expect(rateHeaders(second)).toEqual({ limit: '5', remaining: '3', reset: String(reset) });
    expect(rateHeaders(third)).toEqual({ limit: '5', remaining: '2', reset: String(reset) });
    // The throttler's own Reset would be seconds-until-reset (at most 60): this is a timestamp.
    expect(reset).toBeGreaterThan(1_700_000_000);
  });

  it('puts the headers on error responses too: 403, 404, 400, and counts them', async () => {
    const before = clock.now().getTime();
    const forbidden = await t.http.post('/v1/auth/logout').set(bearer(ro));
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toEqual({
      error: {
        code: 'forbidden',
        message: 'This endpoint is for sessions only; API keys cannot use it',
        request_id: forbidden.headers['x-request-id'],
        details: {},
      },
    });
    expect(rateHeaders(forbidden)).toEqual({ limit: '5', remaining: '4', reset: expect.stringMatching(/^\d+$/) });
    const reset = expectResetWithinWindow(forbidden, before, clock.now().getTime());

    const notFound = await t.http.get('/v1/volumes/vol_unknown').set(bearer(ro));
    expect(notFound.status).toBe(404);
    expect(notFound.body.error.code).toBe('not_found');
    expect(rateHeaders(notFound)).toEqual({ limit: '5', remaining: '3', reset: String(reset) });

    const badBody = await t.http.get('/v1/wallet').set(bearer(ro)).set('Content-Type', 'application/json').send('{not json');
    expect(badBody.status).toBe(400);
    expect(badBody.body).toEqual({
      error: { code: 'invalid_request', message: 'Request body is not valid JSON', request_id: badBody.headers['x-request-id'], details: { field: 'body' } },
    });
    expect(rateHeaders(badBody)).toEqual({ limit: '5', remaining: '2', reset: String(reset) });

    // A session naming an organization it is not a member of: 403 too, after the rate limit (its own bucket).
    const wrongOrg = await t.http.get('/v1/wallet').set(bearer(viewerSession)).set('X-Org-ID', 'org_unknown');
    expect(wrongOrg.status).toBe(403);
    expect(wrongOrg.body).toEqual({
      error: { code: 'forbidden', message: 'X-Org-ID names an organization you are not a member of', request_id: wrongOrg.headers['x-request-id'], details: {} },
    });
    expect(rateHeaders(wrongOrg)).toEqual({ limit: '5', remaining: '4', reset: expect.stringMatching(/^\d+$/) });
  });

  it('answers the request past the limit with 429 rate_limited, Retry-After in whole seconds and the X-RateLimit headers', async () => {
    const before = clock.now().getTime();
    for (let i = 0; i < LIMIT; i++) {
      const ok = await t.http.get('/v1/wallet').set(bearer(rw));
      expect(ok.status).toBe(200);
      expect(ok.headers['x-ratelimit-remaining']).toBe(String(LIMIT - 1 - i));
    }
    const limited = await t.http.get('/v1/wallet').set(bearer(rw));
    const after = clock.now().getTime();
    const retryAfter = expectRateLimited(limited);
    expect(rateHeaders(limited)).toEqual({ limit: '5', remaining: '0', reset: expect.stringMatching(/^\d+$/) });
    const reset = expectResetWithinWindow(limited, before, after);
    // Retry-After points at the same instant as X-RateLimit-Reset, counted from when the server
    // answered (between before and after; far apart on a busy machine), to the second.
    expect(retryAfter).toBeGreaterThanOrEqual(reset - Math.ceil(after / 1000) - 1);
    expect(retryAfter).toBeLessThanOrEqual(reset - Math.floor(before / 1000) + 1);

    // Still limited, on every route, for this credential only.
    const again = await t.http.get('/v1/regions').set(bearer(rw));
    expect(again.status).toBe(429);
    const otherKey = await t.http.get('/v1/wallet').set(bearer(other));
    expect(otherKey.status).toBe(200);
    expect(otherKey.headers['x-ratelimit-remaining']).toBe('4');

    // A fixed window: once it ends, the full limit is back.
    clock.advance(60_000);
    const nextWindow = await t.http.get('/v1/wallet').set(bearer(rw));
    expect(nextWindow.status).toBe(200);
    expect(nextWindow.headers['x-ratelimit-remaining']).toBe('4');
    expect(Number(nextWindow.headers['x-ratelimit-reset'])).toBeGreaterThanOrEqual(reset + 60);
  });

  it('keeps one bucket per credential across all routes (not one per route)', async () => {
    const seen: string[] = [];
    for (const path of ['/v1/wallet', '/v1/regions', '/v1/wallet', '/v1/volume-options?region=id-jkt']) {
      const res = await t.http.get(path).set(bearer(other));
      expect(res.status).toBe(200);
      seen.push(res.headers['x-ratelimit-remaining']);
    }
    const logout = await t.http.post('/v1/auth/logout').set(bearer(other));
    expect(logout.status).toBe(403);
    seen.push(logout.headers['x-ratelimit-remaining']);
    expect(seen).toEqual(['4', '3', '2', '1', '0']);
    expect((await t.http.get('/v1/regions').set(bearer(other))).status).toBe(429);
  });

  it('does not count or decorate a path that matches no route (404, 405)', async () => {
    const unknownPath = await t.http.get('/v1/nothing-here').set(bearer(other));
    expect(unknownPath.status).toBe(404);
    const wrongMethod = await t.http.delete('/v1/wallet').set(bearer(other));
    expect(wrongMethod.status).toBe(405);
    for (const res of [unknownPath, wrongMethod]) expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    const counted = await t.http.get('/v1/wallet').set(bearer(other));
    expect(counted.headers['x-ratelimit-remaining']).toBe('4');
  });

  it('checks in order 401, then 429, then 403, then 400', async () => {
    // Use up the read-only key's window with requests it is not allowed to make (403 counts).
    for (let i = 0; i < LIMIT; i++) {
      const denied = await t.http.post('/v1/auth/logout').set(bearer(ro));
      expect(denied.status).toBe(403);
    }
    // 429 before 403 (permission) and before 400 (body).
    const notAllowed = await t.http.post('/v1/auth/logout').set(bearer(ro));
    expect(notAllowed.status).toBe(429);
    expect(notAllowed.body.error.code).toBe('rate_limited');
    const badBody = await t.http.get('/v1/wallet').set(bearer(ro)).set('Content-Type', 'application/json').send('{not json');
    expect(badBody.status).toBe(429);

    // A session's X-Org-ID is checked with the permission (403), after the rate limit.
    for (let i = 0; i < LIMIT; i++) expect((await t.http.get('/v1/wallet').set(bearer(viewerSession))).status).toBe(200);
    const wrongOrg = await t.http.get('/v1/wallet').set(bearer(viewerSession)).set('X-Org-ID', 'org_unknown');
    expect(wrongOrg.status).toBe(429);

    // 401 before 429: a bad token is refused as such, with no rate-limit headers.
    const unauthorized = await t.http.get('/v1/wallet').set(bearer('cds_live_' + 'x'.repeat(40)));
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.body.error.code).toBe('unauthorized');
    expect(unauthorized.headers['x-ratelimit-limit']).toBeUndefined();
    expect(unauthorized.headers['x-ratelimit-remaining']).toBeUndefined();
    expect(unauthorized.headers['x-ratelimit-reset']).toBeUndefined();
  });

  it('limits sessions per user: every session of a user shares one bucket, so logging in again does not multiply the limit', async () => {
    const login = () => t.http.post('/v1/auth/login').send({ email: 'owner@rl.test', password: OWNER_PASSWORD });
    const first = (await login()).body.token as string;
    const second = (await login()).body.token as string;
    expect(first).not.toBe(second);

    const seen: { session: string; status: number; remaining: string }[] = [];
    for (const [name, token] of [['first', first], ['first', first], ['second', second], ['first', first], ['second', second], ['second', second]]) {
      const res = await t.http.get('/v1/wallet').set(bearer(token));
      seen.push({ session: name, status: res.status, remaining: res.headers['x-ratelimit-remaining'] });
    }
    expect(seen).toEqual([
      { session: 'first', status: 200, remaining: '4' },
      { session: 'first', status: 200, remaining: '3' },
      { session: 'second', status: 200, remaining: '2' },
      { session: 'first', status: 200, remaining: '1' },
      { session: 'second', status: 200, remaining: '0' },
      { session: 'second', status: 429, remaining: '0' },
    ]);
    // A third login does not help either.
    const third = (await login()).body.token as string;
    expectRateLimited(await t.http.get('/v1/wallet').set(bearer(third)));

    // Another user of the same organization, and the organization's API keys, keep their own buckets.
    const viewer = await t.http.get('/v1/wallet').set(bearer(viewerSession));
    expect(viewer.status).toBe(200);
    expect(viewer.headers['x-ratelimit-remaining']).toBe('4');
    const keyed = await t.http.get('/v1/wallet').set(bearer(rw));
    expect(keyed.status).toBe(200);
    expect(keyed.headers['x-ratelimit-remaining']).toBe('4');
  });

  it('limits sessions per user, separately from the API keys of the same organization', async () => {
    for (let i = 0; i < LIMIT; i++) expect((await t.http.get('/v1/wallet').set(bearer(rw))).status).toBe(200);
    expect((await t.http.get('/v1/wallet').set(bearer(rw))).status).toBe(429);
    const session = await t.http.get('/v1/wallet').set(bearer(viewerSession));
    expect(session.status).toBe(200);
    expect(rateHeaders(session)).toEqual({ limit: '5', remaining: '4', reset: expect.stringMatching(/^\d+$/) });
  });

  it('limits login and signup per client IP, with the same headers, in a bucket of its own', async () => {
    const before = clock.now().getTime();
    const statuses: number[] = [];
    const remaining: string[] = [];
    const attempts = [
      () => t.http.post('/v1/auth/login').send({ email: 'viewer@rl.test', password: 'wrong password' }),
      () => t.http.post('/v1/auth/login').send({ email: 'nobody@rl.test', password: 'wrong password' }),
      () => t.http.post('/v1/auth/login').send({ email: 'viewer@rl.test', password: OWNER_PASSWORD }),
      () => t.http.post('/v1/auth/signup').send({ email: 'new@rl.test', password: 'a long password', organization_name: 'New' }),
      () => t.http.post('/v1/auth/signup').send({ email: 'bad', password: 'a long password', organization_name: 'New' }),
    ];
    for (const attempt of attempts) {
      const res = await attempt();
      statuses.push(res.status);
      remaining.push(res.headers['x-ratelimit-remaining']);
      expect(res.headers['x-ratelimit-limit']).toBe('5');
      expectResetWithinWindow(res, before, clock.now().getTime());
    }
    expect(statuses).toEqual([401, 401, 200, 201, 400]);
    expect(remaining).toEqual(['4', '3', '2', '1', '0']);

    // The sixth, even with the right password, is refused and creates no session.
    const sessionsBefore = await t.sql<{ n: string }>('SELECT count(*)::text AS n FROM sessions');
    const limited = await t.http.post('/v1/auth/login').send({ email: 'viewer@rl.test', password: OWNER_PASSWORD });
    expectRateLimited(limited);
    expect(rateHeaders(limited)).toEqual({ limit: '5', remaining: '0', reset: expect.stringMatching(/^\d+$/) });
    expect(await t.sql<{ n: string }>('SELECT count(*)::text AS n FROM sessions')).toEqual(sessionsBefore);
    const signup = await t.http.post('/v1/auth/signup').send({ email: 'late@rl.test', password: 'a long password', organization_name: 'Late' });
    expect(signup.status).toBe(429);
    expect(await t.sql("SELECT id FROM users WHERE email = 'late@rl.test'")).toEqual([]);

    // Authenticated callers from the same IP keep their own buckets.
    const keyed = await t.http.get('/v1/wallet').set(bearer(rw));
    expect(keyed.status).toBe(200);
  });
});
