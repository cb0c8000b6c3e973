import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import express, { NextFunction, Request, Response } from 'express';
import { Observable } from 'rxjs';
import { invalidRequest } from '../kernel/errors/domain-error';
import { PayloadTooLargeError } from './error-envelope';

export const BODY_LIMIT = '1mb';

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
