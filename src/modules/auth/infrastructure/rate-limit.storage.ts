import { Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';
import Redis from 'ioredis';
import { Settings } from '../../../shared/config/settings';
import { Clock } from '../../../shared/kernel/clock/clock';

/** One fixed window of one bucket: hits counted so far and when the window ends (epoch ms). */
export interface WindowHit {
  count: number;
  resetAtMs: number;
}

/**
 * What the rate-limit guard gets back: the throttler's record (seconds, as the library expects)
 * plus the exact end of the window, for X-RateLimit-Reset as Unix seconds.
 */
export interface FixedWindowRecord {
  totalHits: number;
  timeToExpire: number;
  isBlocked: boolean;
  timeToBlockExpire: number;
  resetAtMs: number;
}

/** Fixed windows in this process's memory: the first hit opens a window of `windowMs`. */
export class MemoryWindowCounter {
  private readonly windows = new Map<string, WindowHit>();
  private hitsSinceSweep = 0;

  hit(key: string, windowMs: number, nowMs: number): WindowHit {
    this.sweep(nowMs);
    let window = this.windows.get(key);
    if (!window || window.resetAtMs <= nowMs) {
      window = { count: 0, resetAtMs: nowMs + windowMs };
      this.windows.set(key, window);
    }
    window.count += 1;
    return { ...window };
  }

  get size(): number {
    return this.windows.size;
  }

  clear(): void {
    this.windows.clear();
  }

  /** Drops ended windows now and then, so memory holds only the buckets of the last minute. */
  private sweep(nowMs: number): void {
    this.hitsSinceSweep += 1;
    if (this.hitsSinceSweep < 1000) return;
    this.hitsSinceSweep = 0;
    for (const [key, window] of this.windows) {
      if (window.resetAtMs <= nowMs) this.windows.delete(key);
    }
  }
}

/**
 * One atomic step in Redis: count the hit; the first hit of a window sets its expiry. Returns
 * the count and the milliseconds left. A key found without expiry (should not happen) gets one.
 */
export const FIXED_WINDOW_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
`;

type RedisWithWindow = Redis & { cdsFixedWindowHit(key: string, windowMs: number): Promise<[number, number]> };

/** While Redis is considered down, how often a PING checks whether it answers again. */
export const REDIS_PROBE_INTERVAL_MS = 1000;

/**
 * The throttler's storage: fixed windows, in Redis when REDIS_URL is set (shared by every
 * server process), else in memory. When Redis cannot be reached, requests are counted in this
 * process's memory meanwhile (a warning is logged once per outage): the API keeps answering and
 * stays limited per process, rather than failing every request or lifting all limits.
 *
 * A circuit: once a command fails (refused, closed, or no answer within the 1 s command timeout:
 * a Redis that hangs), Redis is left alone and every request counts in memory at once, so a hung
 * Redis costs the requests in flight at that moment one timeout, and no request after them. A
 * PING every second (in the background) closes the circuit again when Redis answers, as does
 * the connection becoming ready after a reconnection.
 */
@Injectable()
export class FixedWindowRateLimitStorage implements ThrottlerStorage, OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('RateLimit');
  private readonly memory = new MemoryWindowCounter();
  private readonly redis: RedisWithWindow | undefined;
  /** Whether requests are counted in Redis now (the circuit is closed). */
  private redisUp = false;
  /** Whether the current outage was logged (once per outage). */
  private outageLogged = false;
  private probeTimer: NodeJS.Timeout | undefined;
  private probing = false;
  private closing = false;

  constructor(
    settings: Settings,
    private readonly clock: Clock,
  ) {
    if (settings.redisUrl) {
      const redis = new Redis(settings.redisUrl, {
        lazyConnect: true,
        keyPrefix: `${settings.redisKeyPrefix}ratelimit:`,
        // Fail fast instead of queueing requests behind a dead connection.
        enableOfflineQueue: false,
        maxRetriesPerRequest: 1,
        connectTimeout: 2000,
        commandTimeout: 1000,
        retryStrategy: (attempt) => Math.min(attempt * 250, 2000),
      });
      redis.defineCommand('cdsFixedWindowHit', { numberOfKeys: 1, lua: FIXED_WINDOW_SCRIPT });
      redis.on('error', (err: Error) => this.markRedisDown(err));
      redis.on('close', () => this.markRedisDown(new Error('connection closed')));
      redis.on('ready', () => this.markRedisUp());
      this.redis = redis as RedisWithWindow;
    }
  }

  get usesRedis(): boolean {
    return this.redis !== undefined;
  }

  /** Whether requests are counted in Redis right now (false while it is unreachable or hangs, and without Redis). */
  get redisReachable(): boolean {
    return this.redis !== undefined && this.redisUp;
  }

  /** The Redis connection's state ('ready', 'reconnecting', 'end'...), undefined without Redis. */
  get redisStatus(): string | undefined {
    return this.redis?.status;
  }

  async onModuleInit(): Promise<void> {
    if (!this.redis) return;
    // A Redis that is down at start does not stop the service: ioredis keeps reconnecting.
    await this.redis.connect().catch((err: Error) => this.markRedisDown(err));
  }

  async onApplicationShutdown(): Promise<void> {
    this.closing = true;
    this.stopProbe();
    this.memory.clear();
    const redis = this.redis;
    if (!redis || redis.status === 'end') return;
    // quit() resolves on Redis's reply, before the socket is closed: wait for 'end' (bounded).
    let timer: NodeJS.Timeout | undefined;
    const ended = new Promise<void>((resolve) => {
      redis.once('end', () => resolve());
      timer = setTimeout(resolve, 2000);
    });
    if (redis.status === 'ready' && this.redisUp) {
      await redis.quit().catch(() => redis.disconnect());
    } else {
      // disconnect, not quit: quit would wait on a Redis that does not answer.
      redis.disconnect();
    }
    await ended;
    clearTimeout(timer);
  }

  /** The throttler's storage interface; `ttl` is the window in milliseconds. */
  async increment(key: string, ttl: number, limit: number): Promise<FixedWindowRecord> {
    const window = await this.hit(key, ttl);
    const nowMs = this.clock.now().getTime();
    const secondsLeft = Math.max(1, Math.ceil((window.resetAtMs - nowMs) / 1000));
    const isBlocked = window.count > limit;
    return {
      totalHits: window.count,
      timeToExpire: secondsLeft,
      isBlocked,
      timeToBlockExpire: isBlocked ? secondsLeft : 0,
      resetAtMs: window.resetAtMs,
    };
  }

  private async hit(key: string, windowMs: number): Promise<WindowHit> {
    if (this.redis && this.redisUp) {
      try {
        const [count, ttlMs] = await this.redis.cdsFixedWindowHit(key, windowMs);
        return { count: Number(count), resetAtMs: this.clock.now().getTime() + Number(ttlMs) };
      } catch (err) {
        this.markRedisDown(err as Error);
      }
    }
    return this.memory.hit(key, windowMs, this.clock.now().getTime());
  }

  private markRedisDown(err: Error): void {
    if (this.closing) return;
    this.redisUp = false;
    this.startProbe();
    if (this.outageLogged) return;
    this.outageLogged = true;
    this.logger.warn(`Redis unreachable for rate limits (${err.message}); counting in this process's memory until it is back`);
  }

  private markRedisUp(): void {
    if (this.closing) return;
    this.stopProbe();
    if (this.redisUp) return;
    this.redisUp = true;
    if (!this.outageLogged) return;
    this.outageLogged = false;
    this.logger.log('Redis reachable again; rate limits are shared again');
  }

  /** While Redis is down: a PING now and then, on the same connection, in the background. */
  private startProbe(): void {
    if (this.probeTimer || !this.redis) return;
    this.probeTimer = setInterval(() => void this.probe(), REDIS_PROBE_INTERVAL_MS);
    this.probeTimer.unref();
  }

  private stopProbe(): void {
    if (this.probeTimer) clearInterval(this.probeTimer);
    this.probeTimer = undefined;
  }

  private async probe(): Promise<void> {
    const redis = this.redis;
    // Not connected: the reconnection's 'ready' event closes the circuit.
    if (!redis || this.probing || redis.status !== 'ready') return;
    this.probing = true;
    try {
      if ((await redis.ping()) === 'PONG') this.markRedisUp();
    } catch {
      // Still hanging or down: the next probe tries again.
    } finally {
      this.probing = false;
    }
  }
}
