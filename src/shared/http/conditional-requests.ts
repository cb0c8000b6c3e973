import type { NextFunction, Request, Response } from 'express';

/**
 * Conditional GETs only where a route versions its answer. Express answers 304 whenever
 * `req.fresh` holds, and with `If-None-Match: *` it holds even for a response without an ETag:
 * every GET would turn into an undeclared 304 for such a client. Here a request is fresh only
 * when the response carries an ETag (set by a route that declares it with ApiConditionalGet()).
 */
export function conditionalRequestsOnlyWithETag(req: Request, res: Response, next: NextFunction): void {
  const proto = Object.getPrototypeOf(req) as object;
  Object.defineProperty(req, 'fresh', {
    configurable: true,
    enumerable: true,
    get: () => res.getHeader('ETag') !== undefined && (Reflect.get(proto, 'fresh', req) as boolean),
  });
  next();
}
