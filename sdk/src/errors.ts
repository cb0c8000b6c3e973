import type {
  ConflictDetails,
  FieldErrorDetails,
  InstanceMissingDetails,
  InsufficientBalanceDetails,
  Operation,
  OperationInTheWayDetails,
  QuotaExceededDetails,
  ResourceStateDetails,
} from './generated/schema.js';

/** Every error this SDK throws (but an aborted call, which rejects with its signal's reason). */
export class CloudDiskError extends Error {
  override readonly name: string = 'CloudDiskError';
  /** Whether the same call may succeed later: the SDK has retried it already, as far as its limits allowed. */
  readonly retryable: boolean = false;
}

/** `details` of each error code (ErrorBody.details in the API reference). */
export interface ErrorDetails {
  invalid_request: FieldErrorDetails;
  insufficient_balance: InsufficientBalanceDetails;
  quota_exceeded: QuotaExceededDetails;
  invalid_state: OperationInTheWayDetails | ResourceStateDetails | InstanceMissingDetails | Record<string, never>;
  conflict: ConflictDetails | Record<string, never>;
}
export type DetailsOf<C extends string> = C extends keyof ErrorDetails ? ErrorDetails[C] : Record<string, unknown>;

/** Statuses a later attempt may get past: rate limits, server failures, gateways and unavailability. */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 500, 502, 503, 504]);

/**
 * An error answer of the API: its status, its stable `code`, the `requestId` to quote to support
 * (the answer's X-Request-Id), and `details` typed per code. One subclass per code
 * (`NotFoundError`, `InsufficientBalanceError`, ...): `catch (e) { if (e instanceof NotFoundError) … }`.
 */
export class ApiError<C extends string = string> extends CloudDiskError {
  override readonly name: string = 'ApiError';
  override readonly retryable: boolean;
  /** Seconds the API asked to wait (Retry-After of a 429), when it did. */
  readonly retryAfter: number | undefined;

  constructor(
    readonly status: number,
    readonly code: C,
    message: string,
    readonly requestId: string,
    readonly details: DetailsOf<C>,
    readonly headers: Headers,
  ) {
    super(`${message} (${code}, HTTP ${status}, request ${requestId || 'unknown'})`);
    this.retryable = RETRYABLE_STATUSES.has(status);
    const retryAfter = Number(headers.get('retry-after'));
    this.retryAfter = Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined;
  }
}

/**
 * The request could not be completed: the connection was refused, reset or dropped before an
 * answer came. The request may or may not have taken effect; writes carry an Idempotency-Key, so
 * retrying one (the SDK does) cannot act twice.
 */
export class ConnectionError extends CloudDiskError {
  override readonly name: string = 'ConnectionError';
  override readonly retryable: boolean = true;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The call's time ran out (`timeout`), or the wait for an operation did (`operation` is its last state). */
export class TimeoutError extends CloudDiskError {
  override readonly name: string = 'TimeoutError';
  override readonly retryable: boolean = true;
  constructor(
    message: string,
    readonly operation?: Operation,
  ) {
    super(message);
  }
}

/** An operation waited for ended `failed`: `operation.error` says why (whatever was reserved was given back). */
export class OperationFailedError extends CloudDiskError {
  override readonly name: string = 'OperationFailedError';
  /** The operation's error code (`provider_unavailable`, `out_of_stock`, ...). */
  readonly code: string;
  constructor(readonly operation: Operation) {
    super(`Operation ${operation.id} (${operation.type}) failed: ${operation.error?.message ?? 'no error given'} (${operation.error?.code ?? 'unknown'})`);
    this.code = operation.error?.code ?? 'unknown';
  }
}

/** A webhook whose signature or timestamp does not hold: do not trust its body. */
export class WebhookVerificationError extends CloudDiskError {
  override readonly name: string = 'WebhookVerificationError';
}
