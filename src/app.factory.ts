import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module';
import { Settings } from './shared/config/settings';
import { deferredJsonBody } from './shared/http/body-parsing';
import { requestIdMiddleware } from './shared/http/request-id';
import { Clock } from './shared/kernel/clock/clock';

/**
 * Builds the HTTP application exactly as production runs it; tests use this too, so they
 * exercise the same middleware, guards, pipes and filter.
 */
export async function createApp(settings: Settings, options: { clock?: Clock; logger?: false } = {}): Promise<INestApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(settings, options.clock), {
    bodyParser: false,
    logger: options.logger === false ? false : undefined,
  });
  app.disable('x-powered-by');
  app.use(requestIdMiddleware);
  app.use(deferredJsonBody());
  app.enableShutdownHooks();
  return app;
}
