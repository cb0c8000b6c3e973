import { type Server as HttpServer, createServer } from 'node:http';
import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import compression from 'compression';
import type { Express, NextFunction, Request, Response } from 'express';
import { Logger as PinoNestLogger } from 'nestjs-pino';
import { AppModule } from './app.module';
import { AdminModule } from './modules/admin/admin.module';
import { AdminOpenApiDocument, buildAdminOpenApiDocument } from './modules/admin/interface/http/admin-openapi';
import { errorEnvelope } from './shared/http/error-envelope';
import { requestIdOf } from './shared/http/request-id';
import { Settings } from './shared/config/settings';
import { paymentEventsRawBody } from './modules/funding/interface/http/payment-events-body';
import { answerClientErrors } from './shared/http/client-errors';
import { conditionalRequestsOnlyWithETag } from './shared/http/conditional-requests';
import { OpenApiDocument, buildOpenApiDocument } from './shared/http/openapi';
import { requestLifecycle } from './shared/http/request-lifecycle';
import { Clock } from './shared/kernel/clock/clock';
import { RequestLog } from './shared/observability/logging';
import { Metrics } from './shared/observability/metrics';

/**
 * Builds the HTTP application exactly as production runs it; tests use this too, so they
 * exercise the same middleware, guards, pipes and filter.
 */
export async function createApp(settings: Settings, options: { clock?: Clock; logger?: false; abortOnError?: false } = {}): Promise<INestApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(settings, options.clock), {
    bodyParser: false,
    // abortOnError false (tests): a failed start throws instead of ending the process with exit code 1.
    ...(options.abortOnError === false ? { abortOnError: false } : {}),
    logger: options.logger === false ? false : undefined,
    // Nest's own logs wait for pino (structured JSON, LOG_LEVEL) instead of going to the console.
    bufferLogs: options.logger !== false,
  });
  if (options.logger !== false) app.useLogger(app.get(PinoNestLogger));
  app.disable('x-powered-by');
  // TRUST_PROXY: only then does the client IP (per-IP rate limits, audit log) come from X-Forwarded-For.
  if (settings.trustProxy !== false) app.set('trust proxy', settings.trustProxy);
  // No automatic ETag (and so no automatic 304): a route that versions its answers sets its ETag and
  // declares it with ApiConditionalGet() (shared/http/openapi.ts); Express still answers 304 to it.
  app.set('etag', false);
  conditionalRequestsOnlyWithETag(app.getHttpAdapter().getInstance() as Express);
  // Requests Node's parser refuses (headers over 16 KiB, control characters) get the envelope too.
  answerClientErrors(app.getHttpServer());
  // Idle kept-alive connections stay open HTTP_KEEP_ALIVE_TIMEOUT_MS (65 s; Node's default is 5 s):
  // longer than the idle timeout of the usual load balancers (60 s) and clients, so the server is
  // not the side that closes a connection a client is about to reuse (the request would be lost
  // with "socket hang up"). Headers must still arrive within the same time plus 1 s.
  const http = app.getHttpServer() as HttpServer;
  http.keepAliveTimeout = settings.httpKeepAliveTimeoutMs;
  http.headersTimeout = settings.httpKeepAliveTimeoutMs + 1_000;
  // gzip or deflate for clients that accept it, on answers of 1 KiB or more: the docs page's script
  // (1.5 MB) and the OpenAPI document shrink several times; small JSON answers go as they are. A
  // request without Accept-Encoding skips the middleware (its hooks on every response were 2-3% of
  // a read's CPU): its answer could only go uncompressed, which any client or cache accepts.
  const compress = compression();
  app.use((req: Request, res: Response, next: NextFunction) => (req.headers['accept-encoding'] ? compress(req, res, next) : next()));
  app.use(requestLifecycle(app.get(Metrics), app.get(RequestLog)));
  // The admin API answers only on its own listener, and that listener answers nothing else.
  app.use(separateListeners);
  app.use(redirectRootToDocs);
  // The payment provider's callback keeps its exact bytes (its signature covers them; it has no
  // bearer token and is authenticated by that signature): read raw, never inflated, at most 256 KiB.
  app.use('/v1/payment-events', paymentEventsRawBody());
  // No other body parser here: a request body is read only after authentication, the rate limit and the
  // access check, by the last global guard (BodyErrorGuard, shared/http/body-parsing.ts).
  app.get(OpenApiDocument).buildWith(() => buildOpenApiDocument(app, { exclude: [AdminModule] }));
  app.get(AdminOpenApiDocument).buildWith(() => buildAdminOpenApiDocument(app, AdminModule));
  // ADMIN_PORT (0 = off): a second HTTP server on the same application, its requests marked as the admin listener's.
  if (settings.adminPort !== 0) {
    const express = app.getHttpAdapter().getInstance() as Express;
    const admin = createServer((req, res) => {
      (req as Request).adminListener = true;
      express(req as Request, res as Response);
    });
    admin.keepAliveTimeout = settings.httpKeepAliveTimeoutMs;
    admin.headersTimeout = settings.httpKeepAliveTimeoutMs + 1_000;
    answerClientErrors(admin);
    adminServers.set(app, admin);
    http.once('close', () => admin.close());
  }
  // Signals (SIGTERM, SIGINT) are handled by main.ts (graceful-shutdown.ts): drain HTTP, close, exit 0.
  return app;
}

const adminServers = new WeakMap<INestApplication, HttpServer>();

/** The admin listener's HTTP server (not listening yet: main.ts opens it on ADMIN_PORT), or undefined when ADMIN_PORT is 0. */
export function adminServerOf(app: INestApplication): HttpServer | undefined {
  return adminServers.get(app);
}

/** `/admin/…` only on the admin listener (else 404, as an unknown path), and nothing else there. */
function separateListeners(req: Request, res: Response, next: NextFunction): void {
  const adminPath = req.path === '/admin' || req.path.startsWith('/admin/');
  if (adminPath === (req.adminListener === true)) {
    next();
    return;
  }
  res.status(404).json(errorEnvelope('not_found', `Cannot ${req.method} ${req.path}`, requestIdOf(req)));
}

/** `/` is no part of the API: a browser opening it is sent to the interactive documentation. */
function redirectRootToDocs(req: Request, res: Response, next: NextFunction): void {
  if (req.path === '/' && (req.method === 'GET' || req.method === 'HEAD')) {
    res.redirect(302, '/v1/docs');
    return;
  }
  next();
}
