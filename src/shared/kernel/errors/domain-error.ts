/** Stable error codes of interface.md section 7. The HTTP layer maps each to a status. */
export type ErrorCode =
  | 'invalid_request'
  | 'unauthorized'
  | 'invalid_credentials'
  | 'insufficient_balance'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'invalid_state'
  | 'out_of_stock'
  | 'quota_exceeded'
  | 'quote_expired'
  | 'idempotency_conflict'
  | 'conflict'
  | 'rate_limited'
  | 'internal'
  | 'funding_unavailable'
  | 'purchases_paused'
  | 'provider_unavailable';

export type ErrorDetails = Record<string, unknown>;

/** An expected failure with a stable code. Thrown by use cases, mapped once by the HTTP filter. */
export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetails,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const invalidRequest = (message: string, details?: ErrorDetails): DomainError =>
  new DomainError('invalid_request', message, details);
export const notFound = (message: string): DomainError => new DomainError('not_found', message);
export const invalidState = (message: string): DomainError => new DomainError('invalid_state', message);
export const conflict = (message: string): DomainError => new DomainError('conflict', message);
export const forbidden = (message: string): DomainError => new DomainError('forbidden', message);
export const unauthorized = (message: string): DomainError => new DomainError('unauthorized', message);
