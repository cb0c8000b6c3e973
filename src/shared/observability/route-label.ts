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
