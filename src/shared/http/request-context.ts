import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The HTTP request being handled, for code deep in a call: the audit trail records its ids, and
 * every log line written while it is handled carries them (logging.ts's mixin), without every use
 * case passing them along. Empty outside a request (CLI, worker).
 *
 * `requestId` is the server's own id of the request, unique per request; `clientRequestId` the
 * client's valid X-Request-Id, when it sent one (the id the response echoes), else null.
 */
export interface RequestIds {
  requestId: string;
  clientRequestId: string | null;
}

const storage = new AsyncLocalStorage<RequestIds>();

/** The server's id of the request being handled (unique per request); null outside a request. */
export function currentRequestId(): string | null {
  return storage.getStore()?.requestId ?? null;
}

/** The client's valid X-Request-Id of the request being handled; null when it sent none, or outside a request. */
export function currentClientRequestId(): string | null {
  return storage.getStore()?.clientRequestId ?? null;
}

/** Runs `next` (the rest of the request) inside the context of the request `ids`. */
export function runInRequestContext(ids: RequestIds, next: () => void): void {
  storage.run(ids, next);
}
