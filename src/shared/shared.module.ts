import { DynamicModule, Global, Module } from '@nestjs/common';
import { Settings } from './config/settings';
import { Clock, SystemClock } from './kernel/clock/clock';
import { ShutdownNotice } from './lifecycle/shutdown-notice';

/** Settings, the clock and the shutdown notice, available to every module. */
@Global()
@Module({})
export class SharedModule {
  static forRoot(settings: Settings, clock: Clock = new SystemClock()): DynamicModule {
    return {
      module: SharedModule,
      providers: [
        { provide: Settings, useValue: settings },
        { provide: Clock, useValue: clock },
        ShutdownNotice,
      ],
      exports: [Settings, Clock, ShutdownNotice],
    };
  }
}
