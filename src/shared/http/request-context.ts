import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The HTTP request being handled, for code deep in a call: the audit trail records its request
 * id, and every log line written while it is handled carries it (logging.ts's mixin), without
 * every use case passing it along. Empty outside a request (CLI, worker).
 */
const storage = new AsyncLocalStorage<{ requestId: string }>();

export function currentRequestId(): string | null {
  return storage.getStore()?.requestId ?? null;
}

/** Runs `next` (the rest of the request) inside the context of the request `requestId`. */
export function runInRequestContext(requestId: string, next: () => void): void {
  storage.run({ requestId }, next);
}
