import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import Redis from 'ioredis';
import { Settings } from '../../../shared/config/settings';
import { RedisHealth } from '../application/readiness.port';

/**
 * PINGs the Redis of REDIS_URL on a connection of its own, opened at the first probe: a probe
 * must not queue behind the rate limiter's traffic. Closed at shutdown.
 */
@Injectable()
export class IoRedisHealth extends RedisHealth implements OnApplicationShutdown {
  private readonly logger = new Logger('RedisHealth');
  private client: Redis | undefined;

  constructor(private readonly settings: Settings) {
    super();
  }

  configured(): boolean {
    return Boolean(this.settings.redisUrl);
  }

  async ping(): Promise<void> {
    const client = this.connection();
    // First probe: connect now. While the client is reconnecting Redis is down: say so at once
    // rather than queue the PING behind the reconnection.
    if (client.status === 'wait') await client.connect();
    else if (client.status !== 'ready') throw new Error(`Redis connection is ${client.status}`);
    const answer = await client.ping();
    if (answer !== 'PONG') throw new Error(`Redis answered ${answer} to PING`);
  }

  onApplicationShutdown(): void {
    // disconnect, not quit: quit would wait for ever on a Redis that is down.
    this.client?.disconnect();
    this.client = undefined;
  }

  private connection(): Redis {
    if (!this.client) {
      const url = this.settings.redisUrl;
      if (!url) throw new Error('REDIS_URL is not set');
      const client = new Redis(url, {
        lazyConnect: true,
        enableOfflineQueue: false,
        connectTimeout: 2000,
        maxRetriesPerRequest: 1,
        retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
      });
      // Failures show in the readiness answer; here they are only worth a debug line.
      client.on('error', (err: Error) => this.logger.debug({ msg: 'redis health connection error', err: err.message }));
      this.client = client;
    }
    return this.client;
  }
}
