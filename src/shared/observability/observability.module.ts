import { Global, Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { Settings } from '../config/settings';
import { loggerParams } from './logging';
import { Metrics } from './metrics';
import { MetricsServer } from './metrics-server';

/** Structured logs (nestjs-pino) and Prometheus metrics (own registry, own port), for every module. */
@Global()
@Module({
  imports: [LoggerModule.forRootAsync({ inject: [Settings], useFactory: (settings: Settings) => loggerParams(settings) })],
  providers: [Metrics, MetricsServer],
  exports: [Metrics, MetricsServer],
})
export class ObservabilityModule {}
