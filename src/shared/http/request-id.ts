import type { NextFunction, Request, Response } from 'express';
import { newId } from '../kernel/ids/ids';

const VALID_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

declare module 'express-serve-static-core' {
  interface Request {
    /** Set by requestIdMiddleware, the first middleware (pino-http's logs reuse it as request_id). */
    id: string;
  }
}

/** Keeps a valid incoming X-Request-Id, otherwise makes one; echoes it on every response. */
export function requestIdMiddleware(req: Request, res: Response, next: NextFunction): void {
  const incoming = req.header('x-request-id');
  const id = incoming && VALID_REQUEST_ID.test(incoming) ? incoming : newId('req');
  req.id = id;
  res.setHeader('X-Request-Id', id);
  next();
}

export function requestIdOf(req: Request): string {
  return req.id ?? newId('req');
}
