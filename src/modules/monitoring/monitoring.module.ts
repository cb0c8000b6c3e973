import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { ComputeProviderModule } from '../servers/compute-provider.module';
import { StorageProviderModule } from '../storage-provider/storage-provider.module';
import { CheckReadiness } from './application/check-readiness.use-case';
import { DatabaseHealth, RedisHealth } from './application/readiness.port';
import { ServiceStats } from './application/service-stats.port';
import { RateLimitRedisHealth } from './infrastructure/rate-limit-redis-health';
import { TypeOrmDatabaseHealth } from './infrastructure/typeorm-database-health';
import { TypeOrmServiceStats } from './infrastructure/typeorm-service-stats';
import { HealthController } from './interface/http/health.controller';
import { ServiceGauges } from './interface/metrics/service-gauges';

/** Health and readiness probes, and the gauges Prometheus reads from the database. */
@Module({
  imports: [AuthModule, StorageProviderModule, ComputeProviderModule],
  controllers: [HealthController],
  providers: [
    { provide: DatabaseHealth, useClass: TypeOrmDatabaseHealth },
    { provide: RedisHealth, useClass: RateLimitRedisHealth },
    { provide: ServiceStats, useClass: TypeOrmServiceStats },
    CheckReadiness,
    ServiceGauges,
  ],
})
export class MonitoringModule {}
