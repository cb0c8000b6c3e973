import type { Request } from 'express';
import { newId } from '../kernel/ids/ids';

const VALID_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

declare module 'express-serve-static-core' {
  interface Request {
    /** Set by the request lifecycle middleware, the first one (request-lifecycle.ts). */
    id: string;
  }
}

/** A valid incoming X-Request-Id, otherwise a new one. */
export function requestIdFor(incoming: string | string[] | undefined): string {
  return typeof incoming === 'string' && VALID_REQUEST_ID.test(incoming) ? incoming : newId('req');
}

export function requestIdOf(req: Request): string {
  return req.id ?? newId('req');
}
