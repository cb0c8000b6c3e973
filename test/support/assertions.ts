import type { Response } from 'supertest';
import { DomainError } from '../../src/shared/kernel/errors/domain-error';

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

/** The error envelope a client gets, with the response's own request id. */
export function errorBody(res: { headers: Record<string, string> }, code: string, message: string, details: object = {}) {
  return { error: { code, message, request_id: res.headers['x-request-id'], details } };
}

/** The DomainError `work` throws (code, message, details); fails when it throws none. */
export function refusalOf(work: () => unknown): { code: string; message: string; details: unknown } {
  try {
    work();
  } catch (err) {
    if (err instanceof DomainError) return { code: err.code, message: err.message, details: err.details };
    throw err;
  }
  throw new Error('expected a refusal');
}

/** The DomainError the async `work` rejects with (code and message); fails when it resolves. */
export async function asyncRefusal(work: () => Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await work();
  } catch (err) {
    if (err instanceof DomainError) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error('the work was accepted');
}

/**
 * Concurrent identical requests under one Idempotency-Key: every one answered 202 with the same
 * body and Location; exactly one without `Idempotent-Replayed` (the one that ran), the others
 * replaying it (`Idempotent-Replayed: true`).
 */
export function expectOneAcceptedOthersReplayed(results: Response[]): void {
  expect(results.map((r) => r.status)).toEqual(Array(results.length).fill(202));
  const first = results.filter((r) => r.headers['idempotent-replayed'] === undefined);
  expect(first).toHaveLength(1);
  for (const r of results) {
    expect(r.body).toEqual(first[0].body);
    expect(r.headers.location).toBe(`/v1/operations/${first[0].body.operation.id}`);
    if (r !== first[0]) expect(r.headers['idempotent-replayed']).toBe('true');
  }
}
