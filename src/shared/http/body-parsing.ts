import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import express, { NextFunction, Request, Response } from 'express';
import { Observable } from 'rxjs';
import { invalidRequest } from '../kernel/errors/domain-error';
import { PayloadTooLargeError } from './error-envelope';

export const BODY_LIMIT = '1mb';

/** Deepest nesting of objects and arrays a body may have; deeper ones would blow the stack of recursive code (validation, fingerprints). */
export const MAX_BODY_DEPTH = 64;

/** Whether `value` nests objects and arrays deeper than `max` levels. Iterative: any depth is safe to measure. */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > max) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}

declare module 'express-serve-static-core' {
  interface Request {
    bodyError?: Error;
  }
}

/**
 * Parses JSON bodies up to 1 MiB, but does not answer a parse failure itself: it records it
 * so that the error is reported after authentication, rate limit and permission checks
 * (decisions.md check order), by BodyErrorInterceptor and the global filter.
 */
export function deferredJsonBody(): (req: Request, res: Response, next: NextFunction) => void {
  const parse = express.json({ limit: BODY_LIMIT });
  return (req, res, next) => {
    parse(req, res, (err?: unknown) => {
      if (err) {
        const e = err as { type?: string };
        req.bodyError =
          e.type === 'entity.too.large'
            ? new PayloadTooLargeError('1 MiB')
            : invalidRequest('Request body is not valid JSON', { field: 'body' });
        req.body = undefined;
      } else if (nestedDeeperThan(req.body, MAX_BODY_DEPTH)) {
        req.bodyError = invalidRequest(`Request body is nested deeper than ${MAX_BODY_DEPTH} levels`, { field: 'body' });
        req.body = undefined;
      }
      next();
    });
  };
}

/** Runs after the guards: a body that failed to parse becomes the request's error here. */
@Injectable()
export class BodyErrorInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = context.switchToHttp().getRequest<Request>();
    if (req.bodyError) throw req.bodyError;
    return next.handle();
  }
}
