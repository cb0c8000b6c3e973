import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger, NotFoundException, Optional } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { ThrottlerException } from '@nestjs/throttler';
import type { Express, Request, Response } from 'express';
import { DomainError, ErrorCode } from '../kernel/errors/domain-error';
import { Metrics } from '../observability/metrics';
import { routeOf } from '../observability/route-label';
import { ErrorEnvelope, PayloadTooLargeError, STATUS_OF, UnsupportedContentEncodingError, domainErrorResponse, errorEnvelope } from './error-envelope';
import { requestIdOf } from './request-id';
import { allowedMethods } from './route-methods';

/** Codes for Nest's own HTTP exceptions, by status. */
const CODE_OF_STATUS: Partial<Record<number, ErrorCode>> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'invalid_request',
  415: 'invalid_request',
  429: 'rate_limited',
};

/**
 * The one place that turns an exception into an HTTP answer: the envelope of interface.md
 * section 7, for DomainErrors, Nest's own exceptions and anything unexpected (500 internal,
 * logged with the request id, never a stack trace or SQL in the body).
 */
@Catch()
export class HttpExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('HttpExceptionFilter');

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    @Optional() private readonly metrics?: Metrics,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const req = ctx.getRequest<Request>();
    const res = ctx.getResponse<Response>();
    const requestId = requestIdOf(req);
    const { status, body } = this.toResponse(exception, req, res, requestId);
    // Every 429 of the service is produced here, whichever guard refused the request.
    if (body.error.code === 'rate_limited') this.metrics?.rateLimitRejected(routeOf(req));
    if (res.headersSent) {
      // Logged through pino inside the request's context: the line carries its request_id.
      this.logger.error({ msg: 'error after the response started' });
      return;
    }
    // The envelope is JSON whatever the route produces (a `@Header('Content-Type')` of an HTML or CSS route is already set).
    res.status(status).type('application/json').json(body);
  }

  private toResponse(exception: unknown, req: Request, res: Response, requestId: string): { status: number; body: ErrorEnvelope } {
    if (exception instanceof PayloadTooLargeError) {
      return { status: HttpStatus.PAYLOAD_TOO_LARGE, body: domainErrorResponse(exception, requestId).body };
    }
    if (exception instanceof UnsupportedContentEncodingError) {
      return { status: HttpStatus.UNSUPPORTED_MEDIA_TYPE, body: domainErrorResponse(exception, requestId).body };
    }
    if (exception instanceof DomainError) {
      // A refusal that says when to come back (a throttled login): Retry-After, as every 429 has.
      const retryAfter = (exception as DomainError & { retryAfterSeconds?: unknown }).retryAfterSeconds;
      if (typeof retryAfter === 'number') res.setHeader('Retry-After', String(retryAfter));
      return domainErrorResponse(exception, requestId);
    }
    if (exception instanceof ThrottlerException) {
      return { status: 429, body: errorEnvelope('rate_limited', 'Too many requests; retry after the number of seconds in Retry-After', requestId) };
    }
    if (exception instanceof NotFoundException) {
      // Nest's router answers NotFoundException for any unmatched method + path; controllers
      // throw DomainErrors. A path served with other methods is a 405.
      const allow = allowedMethods(this.adapterHost.httpAdapter.getInstance<Express>(), req.path);
      if (allow.length > 0) {
        res.setHeader('Allow', allow.join(', '));
        return {
          status: 405,
          body: errorEnvelope('method_not_allowed', `Method ${req.method} is not allowed on ${req.path}; allowed: ${allow.join(', ')}`, requestId),
        };
      }
      return { status: 404, body: errorEnvelope('not_found', `No route ${req.method} ${req.path}`, requestId) };
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      const code = CODE_OF_STATUS[status];
      if (code) {
        return { status, body: errorEnvelope(code, this.messageOf(exception), requestId) };
      }
    }
    // Logged through pino inside the request's context: the line carries its request_id.
    this.logger.error({
      msg: 'unexpected exception',
      method: req.method,
      path: req.path,
      err: exception instanceof Error ? { name: exception.name, message: exception.message, stack: exception.stack } : String(exception),
    });
    return { status: STATUS_OF.internal, body: errorEnvelope('internal', 'Internal server error; retry, and quote the request_id to support if it persists', requestId) };
  }

  private messageOf(exception: HttpException): string {
    const response = exception.getResponse();
    if (typeof response === 'string') return response;
    const message = (response as { message?: unknown }).message;
    if (Array.isArray(message)) return message.join('; ');
    return typeof message === 'string' ? message : exception.message;
  }
}
