import { DomainError, ErrorCode, ErrorDetails } from '../kernel/errors/domain-error';

/** HTTP status of every error code (interface.md section 7). */
export const STATUS_OF: Record<ErrorCode, number> = {
  invalid_request: 400,
  unauthorized: 401,
  invalid_credentials: 401,
  insufficient_balance: 402,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  invalid_state: 409,
  out_of_stock: 409,
  quota_exceeded: 409,
  quote_expired: 409,
  idempotency_conflict: 409,
  conflict: 409,
  rate_limited: 429,
  internal: 500,
  funding_unavailable: 503,
  purchases_paused: 503,
  provider_unavailable: 503,
};

export interface ErrorEnvelope {
  error: { code: ErrorCode; message: string; request_id: string; details: ErrorDetails };
}

export function errorEnvelope(code: ErrorCode, message: string, requestId: string, details?: ErrorDetails): ErrorEnvelope {
  return { error: { code, message, request_id: requestId, details: details ?? {} } };
}

/** The status and body a DomainError answers with. */
export function domainErrorResponse(err: DomainError, requestId: string): { status: number; body: ErrorEnvelope } {
  return { status: STATUS_OF[err.code], body: errorEnvelope(err.code, err.message, requestId, err.details) };
}

/** Thrown for a request body over the size limit: 413 with code invalid_request. */
export class PayloadTooLargeError extends DomainError {
  constructor(limit: string) {
    super('invalid_request', `Request body is larger than ${limit}`);
  }
}

/**
 * Thrown for a compressed request body (any Content-Encoding but identity): 415 with code
 * invalid_request. Request bodies are never inflated: a small compressed body could stand for a
 * large one, and none of this API's bodies is large enough to need compressing.
 */
export class UnsupportedContentEncodingError extends DomainError {
  constructor(encoding: string) {
    super('invalid_request', `Compressed request bodies are not accepted (Content-Encoding: ${encoding.slice(0, 40)}); send the body uncompressed`);
  }
}
