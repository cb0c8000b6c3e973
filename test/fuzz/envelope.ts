import { STATUS_OF } from '../../src/shared/http/error-envelope';
import type { RawResponse } from './raw-http';

/**
 * What is wrong with a 4xx answer of the fuzz suites, or undefined: it must be the error
 * envelope `{error: {code, message, details, request_id}}` and nothing else, a non-empty message
 * and an object of details, its `request_id` the answer's X-Request-Id (a replayed answer of an
 * Idempotency-Key is the stored one, with the original request's id), and its code the status's
 * (invalid_request: 400, or the framing refusals 413, 414, 415, 417, 431).
 */
export function envelopeProblem(res: RawResponse): string | undefined {
  let body: { error?: { code?: unknown; message?: unknown; request_id?: unknown; details?: unknown } };
  try {
    body = JSON.parse(res.body.toString('utf8')) as typeof body;
  } catch {
    return `${res.status} without a JSON body: ${res.body.toString('utf8', 0, 200)}`;
  }
  const e = body.error;
  if (!e || Object.keys(body).length !== 1 || Object.keys(e).sort().join() !== 'code,details,message,request_id') {
    return `${res.status} is not the error envelope: ${res.body.toString('utf8', 0, 300)}`;
  }
  if (typeof e.message !== 'string' || e.message === '' || typeof e.details !== 'object' || e.details === null) return `malformed envelope ${JSON.stringify(e)}`;
  const replayed = res.headers['idempotent-replayed'] === 'true';
  if (replayed ? typeof e.request_id !== 'string' : e.request_id !== res.headers['x-request-id']) return `request_id ${String(e.request_id)} is not X-Request-Id ${res.headers['x-request-id']}`;
  const code = e.code as keyof typeof STATUS_OF;
  const expected = code === 'invalid_request' ? [400, 413, 414, 415, 417, 431] : [STATUS_OF[code]];
  if (!expected.includes(res.status)) return `code ${String(code)} with status ${res.status}`;
  return undefined;
}
