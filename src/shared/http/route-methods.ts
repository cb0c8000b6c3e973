import type { Express } from 'express';

interface RouterLayer {
  route?: { path: string; methods: Record<string, boolean> };
  match(path: string): boolean;
}

/**
 * The methods served for a path, read from Express 5's router. Empty when no route matches:
 * then the path is unknown (404); otherwise the method is wrong (405 with Allow).
 */
export function allowedMethods(app: Express, path: string): string[] {
  const stack = (app as unknown as { router?: { stack?: RouterLayer[] } }).router?.stack ?? [];
  const methods = new Set<string>();
  for (const layer of stack) {
    if (!layer.route) continue;
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
