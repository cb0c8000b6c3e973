import { Global, Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { Settings } from '../config/settings';
import { RequestLog, createRootLogger, loggerParams } from './logging';
import { Metrics } from './metrics';
import { MetricsServer } from './metrics-server';

/** The application's pino logger, shared by Nest's Logger (nestjs-pino) and the request lines. */
@Module({
  providers: [{ provide: RequestLog, inject: [Settings], useFactory: (settings: Settings) => new RequestLog(createRootLogger(settings)) }],
  exports: [RequestLog],
})
class RequestLogModule {}

/** Structured logs (nestjs-pino) and Prometheus metrics (own registry, own port), for every module. */
@Global()
@Module({
  imports: [RequestLogModule, LoggerModule.forRootAsync({ imports: [RequestLogModule], inject: [RequestLog], useFactory: loggerParams })],
  providers: [Metrics, MetricsServer],
  exports: [Metrics, MetricsServer, RequestLogModule],
})
export class ObservabilityModule {}
