import type { Request } from 'express';
import { isCatchAllRoute } from '../http/route-methods';

/** Label of requests that matched no route (unknown path, wrong method). */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * The route pattern a request matched (`/v1/volumes/:id`), never the raw path with its ids, so
 * that logs group by route and metric labels stay few. Express sets `req.route` when a route
 * layer handles the request; a catch-all middleware route (Nest's `app.all` for middleware
 * bound to every route) is no route of the API. Requests no route handled are `unmatched`.
 */
export function routeOf(req: Request): string {
  const route = req.route as { path?: unknown; methods?: Record<string, boolean> } | undefined;
  if (!route || typeof route.path !== 'string' || (route.methods && isCatchAllRoute({ methods: route.methods }))) return UNMATCHED_ROUTE;
  return route.path;
}

/**
 * The path as routing matched it: the route pattern with each parameter's decoded value put back
 * (encoded the one canonical way), so another case, a trailing slash or %-encoded characters,
 * which the router ignores, give the same path (`/V1/VOLUMES/vol%5Fx/RENEW/` → `/v1/volumes/vol_x/renew`).
 * The raw path for a request no route matched.
 */
export function routedPath(req: Request): string {
  const route = routeOf(req);
  if (route === UNMATCHED_ROUTE) return req.path;
  const params = (req.params ?? {}) as Record<string, unknown>;
  return route.replace(/:([A-Za-z0-9_]+)/g, (_match, name: string) => encodeURIComponent(String(params[name] ?? '')));
}
