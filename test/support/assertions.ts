import type { Response } from 'supertest';

/** A 429 as a client sees it: the whole rate_limited envelope and a Retry-After of 1 to 60 whole seconds. */
export function expectRateLimited(res: Response): number {
  expect(res.status).toBe(429);
  expect(res.body).toEqual({
    error: {
      code: 'rate_limited',
      message: 'Too many requests; retry after the number of seconds in Retry-After',
      request_id: res.headers['x-request-id'],
      details: {},
    },
  });
  expect(res.headers['retry-after']).toMatch(/^[1-9]\d*$/);
  const retryAfter = Number(res.headers['retry-after']);
  expect(retryAfter).toBeLessThanOrEqual(60);
  return retryAfter;
}
