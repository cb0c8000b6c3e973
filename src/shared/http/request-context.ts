import { AsyncLocalStorage } from 'node:async_hooks';
import type { NextFunction, Request, Response } from 'express';

/**
 * The HTTP request being handled, for code deep in a call (the audit trail records the request
 * id without every use case passing it along). Empty outside a request (CLI, worker).
 */
const storage = new AsyncLocalStorage<{ requestId: string }>();

export function currentRequestId(): string | null {
  return storage.getStore()?.requestId ?? null;
}

/** Runs the rest of the request inside its context; after requestIdMiddleware (req.id is set). */
export function requestContextMiddleware(req: Request, _res: Response, next: NextFunction): void {
  storage.run({ requestId: req.id }, next);
}
