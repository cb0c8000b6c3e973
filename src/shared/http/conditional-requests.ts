import type { Express, Request } from 'express';

/**
 * Conditional GETs only where a route versions its answer. Express answers 304 whenever
 * `req.fresh` holds, and with `If-None-Match: *` it holds even for a response without an ETag:
 * every GET would turn into an undeclared 304 for such a client. Here a request is fresh only
 * when the response carries an ETag (set by a route that declares it with ApiConditionalGet()).
 * Defined once on the application's request prototype, not on every request.
 */
export function conditionalRequestsOnlyWithETag(app: Express): void {
  const appRequest = app.request as Request;
  const expressRequest = Object.getPrototypeOf(appRequest) as object;
  Object.defineProperty(appRequest, 'fresh', {
    configurable: true,
    enumerable: true,
    get(this: Request): boolean {
      return this.res?.getHeader('ETag') !== undefined && (Reflect.get(expressRequest, 'fresh', this) as boolean);
    },
  });
}
