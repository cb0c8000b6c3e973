import { randomUUID } from 'node:crypto';
import type { ActionOptions, RequestOptions, Transport, WaitOptions } from './area.js';
import { ApiError, CloudDiskError, ConnectionError, OperationFailedError, TimeoutError } from './errors.js';
import { ERROR_CLASSES, ROUTES, RouteSpec } from './generated/api.js';
import type { Operation } from './generated/schema.js';
import { SDK_VERSION } from './generated/version.js';
import { Paginator } from './pagination.js';

/** Why the client retries, and when: given to `onRetry`. */
export interface RetryInfo {
  /** The API operation (`purchaseServer`, `getOperation`, ...). */
  operationId: string;
  /** The attempt that failed, from 1. */
  attempt: number;
  /** Milliseconds until the next attempt (at least Retry-After for a 429). */
  delayMs: number;
  error: CloudDiskError;
  /** The Idempotency-Key sent on every attempt of this call, when the route takes one. */
  idempotencyKey?: string;
}

/** How the client reaches the API. */
export interface ClientOptions {
  /** The service's address, such as `https://api.example.com` (every path starts with /v1). */
  baseUrl: string;
  /** An API key (`cds_live_…`) or a session token (`cds_sess_…`, from `auth.login`). */
  token?: string;
  /** Sessions only: the organization to act on (X-Org-ID); the user's first one by default. */
  orgId?: string;
  /** The fetch to use (a proxy's, a test's); the global one by default. It is called with the URL as a string. */
  fetch?: FetchLike;
  /** Milliseconds a call may take, retries included (an operation's wait has its own); 60,000 by default. */
  timeout?: number;
  /** Retries after the first attempt: connection errors, 429, 500, 502, 503, 504; 3 by default. */
  maxRetries?: number;
  /** The first retry's delay in ms, doubled at each retry (with jitter: half of it to all of it); 500 by default. */
  retryBaseDelay?: number;
  /** The longest delay between two attempts in ms (but a longer Retry-After is honoured); 20,000 by default. */
  maxRetryDelay?: number;
  /** Appended to the user agent (`cloud-disk-sdk-js/1.0.0 node/v22.… your-app/2.1`). */
  userAgent?: string;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
  /** Called before each retry (logging, metrics). */
  onRetry?: (info: RetryInfo) => void;
}

/** What the client needs of fetch: the global one, or any function of the same shape for string URLs. */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
}

const ENDED = new Set(['succeeded', 'failed']);
const DEFAULT_WAIT_MS = 10 * 60_000;

/** The user agent naming this SDK, its version and the runtime. */
export function userAgent(extra?: string): string {
  return [`cloud-disk-sdk-js/${SDK_VERSION}`, `node/${process.version}`, extra].filter(Boolean).join(' ');
}

/** The error of a non-2xx answer: the class of its code, with its request id, details and Retry-After. */
export function apiErrorFrom(status: number, headers: Headers, body: unknown): ApiError {
  const envelope = (body as { error?: { code?: unknown; message?: unknown; request_id?: unknown; details?: unknown } } | undefined)?.error;
  const requestId = typeof envelope?.request_id === 'string' ? envelope.request_id : (headers.get('x-request-id') ?? '');
  if (typeof envelope?.code !== 'string') {
    const text = typeof body === 'string' && body ? `: ${body.slice(0, 200)}` : '';
    return new ApiError(status, 'unexpected_response', `HTTP ${status} without an error envelope${text}`, requestId, {}, headers);
  }
  const Class = (ERROR_CLASSES as Record<string, typeof ApiError>)[envelope.code] ?? ApiError;
  const details = envelope.details && typeof envelope.details === 'object' ? envelope.details : {};
  return new Class(status, envelope.code, String(envelope.message ?? ''), requestId, details as never, headers);
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortReason(signal));
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortReason(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** A refused connection never reached the service: safe to retry whatever the request. */
function neverSent(err: unknown): boolean {
  const cause = (err as { cause?: { code?: string } }).cause;
  return cause?.code === 'ECONNREFUSED' || cause?.code === 'ENOTFOUND' || cause?.code === 'EAI_AGAIN';
}

/**
 * The HTTP side of the client: builds each request from the route table, sends it with the
 * token, X-Org-ID, user agent and Idempotency-Key, retries what may be retried with backoff and
 * jitter (never another 4xx), within the attempts and the deadline, and waits for operations with
 * long-polls (`?wait=` and If-None-Match), never by polling in a loop.
 */
export class HttpTransport implements Transport {
  private readonly fetch: FetchLike;
  private readonly baseUrl: string;

  constructor(readonly options: ClientOptions) {
    if (!options.baseUrl) throw new TypeError('baseUrl is required (the address of the service, such as http://localhost:3000)');
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.fetch = options.fetch ?? ((url, init) => globalThis.fetch(url, init));
  }

  async call(operationId: string, pathArgs: readonly string[], params: object | undefined, options: ActionOptions = {}): Promise<unknown> {
    const route = this.route(operationId);
    const answer = await this.send(operationId, route, pathArgs, params, options);
    if (!options.wait || !route.waits) return answer.body;
    return this.finish(route, answer.body as Record<string, unknown>, options.wait === true ? { signal: options.signal } : { signal: options.signal, ...options.wait });
  }

  paginate<T, P>(operationId: string, pathArgs: readonly string[], params: object | undefined, options: RequestOptions = {}): Paginator<T, P> {
    const route = this.route(operationId);
    if (!route.list) throw new TypeError(`${operationId} is not a list`);
    return new Paginator<T, P>(
      async (cursor) => (await this.send(operationId, route, pathArgs, cursor ? { ...params, cursor } : params, options)).body as P,
      route.list.items,
      route.list.cursor,
    );
  }

  /**
   * Waits for operation `id` to end with long-polls: `GET /v1/operations/{id}?wait=N` answers as
   * soon as it ends, or after N seconds; from the second request on, If-None-Match carries the
   * last ETag, so an unchanged operation costs a bodiless 304. At most one request per
   * `pollSeconds` while nothing changes (an early unchanged answer, say from a server shutting
   * down, is followed after the rest of that period, not at once).
   */
  async waitForOperation(id: string, options: WaitOptions = {}): Promise<Operation> {
    const pollSeconds = Math.min(60, Math.max(1, Math.floor(options.pollSeconds ?? 60)));
    const deadline = Date.now() + (options.timeout ?? DEFAULT_WAIT_MS);
    const route = this.route('getOperation');
    let etag: string | undefined;
    let last: Operation | undefined;
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) throw new TimeoutError(`Operation ${id} has not ended (${last?.status ?? 'unknown'}) within the wait's timeout`, last);
      const wait = Math.max(1, Math.min(pollSeconds, Math.floor(left / 1000)));
      const started = Date.now();
      const answer = await this.send('getOperation', route, [id], { wait }, {
        signal: options.signal,
        // The long-poll itself, then the client's usual time for an answer.
        timeout: wait * 1000 + (this.options.timeout ?? 60_000),
        headers: etag ? { 'If-None-Match': etag } : {},
      });
      const changed = answer.status !== 304;
      if (changed) {
        last = answer.body as Operation;
        etag = answer.headers.get('etag') ?? undefined;
        if (ENDED.has(last.status)) return last;
      }
      const early = wait * 1000 - (Date.now() - started);
      if (!changed && early > 0) await sleep(Math.min(early, Math.max(0, deadline - Date.now())), options.signal);
    }
  }

  /** The answer of an accepted action once its operation ended: the operation, and the resource read again. */
  private async finish(route: RouteSpec, body: Record<string, unknown>, wait: WaitOptions): Promise<unknown> {
    const accepted = body.operation as Operation;
    const operation = await this.waitForOperation(accepted.id, wait);
    if (operation.status === 'failed') throw new OperationFailedError(operation);
    const out: Record<string, unknown> = { ...body, operation };
    const { resource, get } = route.waits ?? {};
    const id = resource ? (body[resource] as { id?: string } | undefined)?.id : undefined;
    if (resource && get && id) out[resource] = await this.call(get, [id], undefined, { signal: wait.signal });
    return out;
  }

  private route(operationId: string): RouteSpec {
    const route = (ROUTES as Record<string, RouteSpec>)[operationId];
    if (!route) throw new TypeError(`Unknown operation ${operationId}`);
    return route;
  }

  private request(route: RouteSpec, pathArgs: readonly string[], params: object | undefined, options: RequestOptions, idempotencyKey: string | undefined): { url: string; init: RequestInit } {
    let i = 0;
    const path = route.path.replace(/\{\w+\}/g, () => {
      const value = pathArgs[i++];
      if (typeof value !== 'string' || value === '') throw new TypeError(`${route.method} ${route.path}: path parameter ${i} is missing`);
      return encodeURIComponent(value);
    });
    const search = new URLSearchParams();
    const body: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(params ?? {})) {
      if (value === undefined) continue;
      if (route.query.includes(name)) {
        for (const v of Array.isArray(value) ? value : [value]) search.append(name, String(v));
      } else if (route.body === 'none') {
        // Say it rather than drop it: `volumes.delete(id, { wait: true })` means the options, which come after the parameters.
        throw new TypeError(`${route.method} ${route.path} takes no parameter ${name}${route.query.length ? ` (its parameters: ${route.query.join(', ')})` : ''}; options go in the last argument`);
      } else {
        body[name] = value;
      }
    }
    const headers: Record<string, string> = {
      Accept: 'application/json',
      'User-Agent': userAgent(this.options.userAgent),
      ...this.options.headers,
    };
    if (route.authenticated && this.options.token) headers.Authorization = `Bearer ${this.options.token}`;
    if (route.authenticated && this.options.orgId) headers['X-Org-ID'] = this.options.orgId;
    if (idempotencyKey) headers['Idempotency-Key'] = idempotencyKey;
    const sendsBody = route.body === 'required' || (route.body === 'optional' && Object.keys(body).length > 0);
    if (sendsBody) headers['Content-Type'] = 'application/json';
    Object.assign(headers, options.headers);
    const query = search.toString();
    return {
      url: `${this.baseUrl}${path}${query ? `?${query}` : ''}`,
      init: { method: route.method, headers, ...(sendsBody ? { body: JSON.stringify(body) } : {}) },
    };
  }

  /** One call: attempts until an answer that is no retryable error, within the attempts and the deadline. */
  private async send(operationId: string, route: RouteSpec, pathArgs: readonly string[], params: object | undefined, options: RequestOptions): Promise<Answer> {
    const idempotencyKey = route.idempotencyKey ? (options.idempotencyKey ?? randomUUID()) : undefined;
    const { url, init } = this.request(route, pathArgs, params, options, idempotencyKey);
    const maxRetries = options.maxRetries ?? this.options.maxRetries ?? 3;
    const deadline = Date.now() + (options.timeout ?? this.options.timeout ?? 60_000);
    // May the request be sent again when its answer was lost? Reads, PATCHes (they set values) and writes with an Idempotency-Key.
    const replayable = route.method === 'GET' || route.method === 'PATCH' || idempotencyKey !== undefined;
    for (let attempt = 1; ; attempt++) {
      const left = deadline - Date.now();
      if (left <= 0) throw new TimeoutError(`${route.method} ${route.path}: no answer within the call's timeout`);
      const error = await this.attempt(url, init, left, options.signal);
      if (!(error instanceof CloudDiskError)) return error;
      const retry =
        attempt <= maxRetries &&
        (error instanceof ApiError
          ? error.status === 429 || (error.retryable && replayable)
          : error instanceof ConnectionError && (replayable || neverSent(error)));
      if (!retry) throw error;
      const backoff = Math.min(this.options.maxRetryDelay ?? 20_000, (this.options.retryBaseDelay ?? 500) * 2 ** (attempt - 1));
      let delayMs = backoff / 2 + Math.random() * (backoff / 2);
      if (error instanceof ApiError && error.retryAfter !== undefined) delayMs = error.retryAfter * 1000 + Math.random() * 250;
      // A wait that would end after the deadline is not waited: the error now, rather than later.
      if (Date.now() + delayMs >= deadline) throw error;
      this.options.onRetry?.({ operationId, attempt, delayMs, error, ...(idempotencyKey ? { idempotencyKey } : {}) });
      await sleep(delayMs, options.signal);
    }
  }

  /** One attempt: the answer, or the error it ended with (an abort by the caller is thrown). */
  private async attempt(url: string, init: RequestInit, timeoutMs: number, signal: AbortSignal | undefined): Promise<Answer | CloudDiskError> {
    const timeout = AbortSignal.timeout(timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    try {
      const res = await this.fetch(url, { ...init, signal: combined });
      const text = res.status === 204 || res.status === 304 ? '' : await res.text();
      const json = text && /\bjson\b/i.test(res.headers.get('content-type') ?? '');
      const body: unknown = json ? JSON.parse(text) : text || undefined;
      if (res.status < 300 || res.status === 304) return { status: res.status, headers: res.headers, body };
      return apiErrorFrom(res.status, res.headers, body);
    } catch (err) {
      if (signal?.aborted) throw abortReason(signal);
      if (timeout.aborted) return new TimeoutError(`${init.method} ${url}: no answer within the call's timeout`);
      if (err instanceof SyntaxError) return new ConnectionError(`${init.method} ${url}: the answer was cut short (${err.message})`, { cause: err });
      const cause = (err as { cause?: { message?: string; code?: string } }).cause;
      return new ConnectionError(`${init.method} ${url}: ${cause?.message ?? (err as Error).message}${cause?.code ? ` (${cause.code})` : ''}`, { cause: err });
    }
  }
}
