import { Injectable } from '@nestjs/common';
import { FixedWindowRateLimitStorage } from '../../auth/infrastructure/rate-limit.storage';
import { RedisHealth } from '../application/readiness.port';

/** Redis as the rate limiter sees it: configured, and whether its circuit counts in Redis now. */
@Injectable()
export class RateLimitRedisHealth extends RedisHealth {
  constructor(private readonly storage: FixedWindowRateLimitStorage) {
    super();
  }

  configured(): boolean {
    return this.storage.usesRedis;
  }

  reachable(): boolean {
    return this.storage.redisReachable;
  }
}
