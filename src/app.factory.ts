import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Express } from 'express';
import { Logger as PinoNestLogger } from 'nestjs-pino';
import { AppModule } from './app.module';
import { Settings } from './shared/config/settings';
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
export async function createApp(settings: Settings, options: { clock?: Clock; logger?: false } = {}): Promise<INestApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(settings, options.clock), {
    bodyParser: false,
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
  app.use(requestLifecycle(app.get(Metrics), app.get(RequestLog)));
  // No body parser here: a request body is read only after authentication, the rate limit and the
  // access check, by the last global guard (BodyErrorGuard, shared/http/body-parsing.ts).
  app.get(OpenApiDocument).buildWith(() => buildOpenApiDocument(app));
  // Signals (SIGTERM, SIGINT) are handled by main.ts (graceful-shutdown.ts): drain HTTP, close, exit 0.
  return app;
}
