import type { Request, Response } from 'express';
import { STATUS_OF, domainErrorResponse } from '../../../../shared/http/error-envelope';
import { requestIdOf } from '../../../../shared/http/request-id';
import { routedPath } from '../../../../shared/observability/route-label';
import { DomainError, ErrorCode, invalidRequest } from '../../../../shared/kernel/errors/domain-error';
import { IdempotentOutcome } from '../../application/idempotent-execution';
import { IdempotencyScope, StoredResponse, idempotencyKeyDigest, isValidIdempotencyKey, requestFingerprint } from '../../domain/idempotency';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

/**
 * The request's Idempotency-Key scope (undefined without the header): the key, checked
 * (1–255 printable ASCII, else 400 naming the header), and the fingerprint of method, path as
 * routing matched it (case, a trailing slash and %-encoding ignored) and parsed body. Call it in the handler, after body validation (decisions.md check order).
 */
export function idempotencyScope(req: Request, orgId: string): IdempotencyScope | undefined {
  const key = req.headers['idempotency-key'];
  if (key === undefined) return undefined;
  if (typeof key !== 'string' || !isValidIdempotencyKey(key)) {
    throw invalidRequest(`${IDEMPOTENCY_KEY_HEADER} must be 1 to 255 printable ASCII characters`, { field: IDEMPOTENCY_KEY_HEADER });
  }
  return { orgId, key, keyDigest: idempotencyKeyDigest(key), fingerprint: requestFingerprint(req.method, routedPath(req), req.body), caller: callerOf(req) };
}

/** Who sends the request, as IdempotencyScope.caller: the session's user (any of their sessions) or the API key. */
function callerOf(req: Request): string | undefined {
  const credential = req.principal ?? req.credential;
  if (!credential) return undefined;
  if (credential.kind === 'session') return `user:${credential.userId}`;
  return `key:${'credentialId' in credential ? credential.credentialId : credential.id}`;
}

/** Domain errors that are the request's answer and are stored for replay (decisions.md). */
export const STORED_ERROR_CODES: readonly ErrorCode[] = ['not_found', 'invalid_state', 'insufficient_balance'];

/** The statuses of STORED_ERROR_CODES: the error answers a replay may repeat (Idempotent-Replayed: true). */
export const STORED_ERROR_STATUSES: number[] = [...new Set(STORED_ERROR_CODES.map((code) => STATUS_OF[code]))];

/** Turns a storable DomainError into the response the global filter would give, for storing. */
export function storableErrors(req: Request, codes: readonly ErrorCode[] = STORED_ERROR_CODES): (err: unknown) => StoredResponse | undefined {
  return (err) => {
    if (!(err instanceof DomainError) || !codes.includes(err.code)) return undefined;
    const { status, body } = domainErrorResponse(err, requestIdOf(req));
    return { status, body: JSON.stringify(body), headers: {} };
  };
}

/** A 204 No Content answer, for storing. */
export function noContentResponse(): StoredResponse {
  return { status: 204, body: '', headers: {} };
}

/** A JSON response whose body is kept as text, so a replay sends the very same bytes. */
export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): StoredResponse {
  return { status, body: JSON.stringify(body), headers };
}

/** Sends the outcome: stored headers, `Idempotent-Replayed: true` on replays, the body's exact bytes. */
export function sendOutcome(res: Response, outcome: IdempotentOutcome): void {
  for (const [name, value] of Object.entries(outcome.response.headers)) res.setHeader(name, value);
  if (outcome.replayed) res.setHeader('Idempotent-Replayed', 'true');
  res.status(outcome.response.status).type('application/json').send(outcome.response.body);
}
