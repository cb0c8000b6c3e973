import type { Paginator } from './pagination.js';

/** Options of every call. */
export interface RequestOptions {
  /** Aborts the call, its retries and any wait: the promise rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Milliseconds the call may take, its retries included (not an operation's wait); the client's `timeout` by default. */
  timeout?: number;
  /** Retries after the first attempt; the client's `maxRetries` by default. */
  maxRetries?: number;
  /** The Idempotency-Key of a write that takes one; one is made per call by default, the same for its retries. */
  idempotencyKey?: string;
  /** More request headers. */
  headers?: Record<string, string>;
}

/** How long, and how, to wait for an operation. */
export interface WaitOptions {
  /** Milliseconds to wait for the end; 10 minutes by default. A `TimeoutError` (with the operation as last read) after it. */
  timeout?: number;
  /** The `?wait=` of each long-poll request, 1 to 60 seconds (60 by default): one request per this many seconds at most. */
  pollSeconds?: number;
  /** Aborts the wait. */
  signal?: AbortSignal;
}

/** Options of a call answered with an operation. */
export interface ActionOptions extends RequestOptions {
  /**
   * Wait for the operation to end before answering: `true`, or how long and how. The answer then
   * holds the ended operation and the resource as it is after it; a failed operation rejects with
   * an `OperationFailedError`.
   */
  wait?: boolean | WaitOptions;
}

/** What the areas call: the client's transport. */
export interface Transport {
  call(operationId: string, pathArgs: readonly string[], params: object | undefined, options: ActionOptions | undefined): Promise<unknown>;
  paginate<T, P>(operationId: string, pathArgs: readonly string[], params: object | undefined, options: RequestOptions | undefined): Paginator<T, P>;
}

/** An area of the API (servers, volumes, ...): a method per route. */
export abstract class Area {
  constructor(protected readonly transport: Transport) {}
}
