import { METHODS } from 'node:http';
import type { Express } from 'express';

interface RouterLayer {
  route?: { path: string; methods: Record<string, boolean> };
  match(path: string): boolean;
}

/**
 * Whether a route layer answers every HTTP method: what Nest registers for a middleware bound
 * to all routes (`app.all`, e.g. nestjs-pino's request logger), not a route a controller serves.
 */
export function isCatchAllRoute(route: { methods: Record<string, boolean> }): boolean {
  return METHODS.every((m) => route.methods[m.toLowerCase()]);
}

/** The routes the application serves (path pattern and methods), from Express 5's router. */
export function servedRoutes(app: Express): { path: string; methods: string[] }[] {
  const stack = (app as unknown as { router?: { stack?: RouterLayer[] } }).router?.stack ?? [];
  return stack
    .filter((layer) => layer.route && !isCatchAllRoute(layer.route))
    .map((layer) => ({
      path: layer.route!.path,
      methods: Object.entries(layer.route!.methods)
        .filter(([method, on]) => on && method !== '_all')
        .map(([method]) => method.toUpperCase()),
    }));
}

/**
 * The methods served for a path, read from Express 5's router. Empty when no route matches:
 * then the path is unknown (404); otherwise the method is wrong (405 with Allow).
 */
export function allowedMethods(app: Express, path: string): string[] {
  const stack = (app as unknown as { router?: { stack?: RouterLayer[] } }).router?.stack ?? [];
  const methods = new Set<string>();
  for (const layer of stack) {
    if (!layer.route || isCatchAllRoute(layer.route)) continue;
    let matches = false;
    try {
      matches = layer.match(path);
    } catch {
      matches = false;
    }
    if (!matches) continue;
    for (const [method, on] of Object.entries(layer.route.methods)) {
      if (on && method !== '_all') methods.add(method.toUpperCase());
    }
  }
  if (methods.has('GET')) methods.add('HEAD');
  return [...methods].sort();
}
