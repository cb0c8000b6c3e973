import { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { SkipThrottle, Throttle, ThrottlerException } from '@nestjs/throttler';
import { FixedWindowRateLimitStorage, MemoryWindowCounter } from '../../src/modules/auth/infrastructure/rate-limit.storage';
import { RateLimitGuard, rateLimitOptions } from '../../src/modules/auth/interface/http/rate-limit.guard';
import { loadSettings } from '../../src/shared/config/settings';
import { FixedClock } from '../../src/shared/kernel/clock/clock';

const T0 = new Date('2026-11-21T10:00:00.250Z').getTime();

describe('MemoryWindowCounter: fixed windows opened by the first hit', () => {
  it('counts hits until the window ends, then starts a new one', () => {
    const c = new MemoryWindowCounter();
    expect(c.hit('a', 60_000, T0)).toEqual({ count: 1, resetAtMs: T0 + 60_000 });
    expect(c.hit('a', 60_000, T0 + 59_999)).toEqual({ count: 2, resetAtMs: T0 + 60_000 });
    expect(c.hit('b', 60_000, T0 + 1_000)).toEqual({ count: 1, resetAtMs: T0 + 61_000 });
    expect(c.hit('a', 60_000, T0 + 60_000)).toEqual({ count: 1, resetAtMs: T0 + 120_000 });
  });

  it('forgets ended windows, so memory holds only recent buckets', () => {
    const c = new MemoryWindowCounter();
    for (let i = 0; i < 999; i++) c.hit(`k${i}`, 60_000, T0);
    expect(c.size).toBe(999);
    c.hit('late', 60_000, T0 + 60_000);
    expect(c.size).toBe(1);
  });
});

describe('FixedWindowRateLimitStorage in memory', () => {
  it('blocks past the limit with whole seconds left, at least 1', async () => {
    const clock = new FixedClock(new Date(T0));
    const storage = new FixedWindowRateLimitStorage({ ...loadSettings({}), redisUrl: undefined }, clock);
    expect(storage.usesRedis).toBe(false);
    expect(await storage.increment('k', 60_000, 2)).toEqual({ totalHits: 1, timeToExpire: 60, isBlocked: false, timeToBlockExpire: 0, resetAtMs: T0 + 60_000 });
    await storage.increment('k', 60_000, 2);
    clock.advance(59_900);
    expect(await storage.increment('k', 60_000, 2)).toEqual({ totalHits: 3, timeToExpire: 1, isBlocked: true, timeToBlockExpire: 1, resetAtMs: T0 + 60_000 });
    clock.advance(100);
    expect((await storage.increment('k', 60_000, 2)).isBlocked).toBe(false);
    await storage.onApplicationShutdown();
  });
});

describe('RateLimitGuard', () => {
  class Controller {
    first(): void {}
    second(): void {}
    @SkipThrottle()
    health(): void {}
    @Throttle({ default: { limit: 1, ttl: 60_000 } })
    strict(): void {}
  }

  async function guardWithLimit(limit: number) {
    const clock = new FixedClock(new Date(T0));
    const settings = { ...loadSettings({}), rateLimitPerMinute: limit };
    const storage = new FixedWindowRateLimitStorage(settings, clock);
    const guard = new RateLimitGuard(rateLimitOptions(settings), storage, new Reflector(), clock);
    await guard.onModuleInit();
    return guard;
  }

  function call(handler: () => void, req: object) {
    const headers: Record<string, string> = {};
    const res = { setHeader: (name: string, value: string) => (headers[name] = value) };
    const context = {
      getHandler: () => handler,
      getClass: () => Controller,
      switchToHttp: () => ({ getRequest: () => req, getResponse: () => res }),
    } as unknown as ExecutionContext;
    return { context, headers };
  }

  const session = { credential: { kind: 'session', id: 'ses_1', userId: 'usr_1' }, ip: '10.0.0.1', socket: {} };

  it('counts one bucket per credential across handlers, and sets Reset as Unix seconds', async () => {
    const guard = await guardWithLimit(2);
    const a = call(Controller.prototype.first, session);
    expect(await guard.canActivate(a.context)).toBe(true);
    expect(a.headers).toEqual({ 'X-RateLimit-Limit': '2', 'X-RateLimit-Remaining': '1', 'X-RateLimit-Reset': String(Math.ceil((T0 + 60_000) / 1000)) });
    const b = call(Controller.prototype.second, session);
    expect(await guard.canActivate(b.context)).toBe(true);
    expect(b.headers['X-RateLimit-Remaining']).toBe('0');
    const c = call(Controller.prototype.first, session);
    await expect(guard.canActivate(c.context)).rejects.toBeInstanceOf(ThrottlerException);
    expect(c.headers).toEqual({ 'X-RateLimit-Limit': '2', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': '1795255261', 'Retry-After': '60' });

    // Another credential, or no credential (public route: per IP), has its own bucket.
    const d = call(Controller.prototype.first, { ...session, credential: { kind: 'api_key', id: 'key_1', orgId: 'org_1', scopes: [] } });
    expect(await guard.canActivate(d.context)).toBe(true);
    const e = call(Controller.prototype.first, { ip: '10.0.0.1', socket: {} });
    expect(await guard.canActivate(e.context)).toBe(true);
    expect(e.headers['X-RateLimit-Remaining']).toBe('1');
  });

  it('neither counts nor decorates a route marked @SkipThrottle() (health checks)', async () => {
    const guard = await guardWithLimit(1);
    for (let i = 0; i < 3; i++) {
      const skipped = call(Controller.prototype.health, { ip: '10.0.0.1', socket: {} });
      expect(await guard.canActivate(skipped.context)).toBe(true);
      expect(skipped.headers).toEqual({});
    }
    const counted = call(Controller.prototype.first, { ip: '10.0.0.1', socket: {} });
    expect(await guard.canActivate(counted.context)).toBe(true);
    expect(counted.headers['X-RateLimit-Remaining']).toBe('0');
  });

  it('applies the limit a route declares with @Throttle() instead of the module one, in the same bucket', async () => {
    const guard = await guardWithLimit(5);
    const first = call(Controller.prototype.strict, session);
    expect(await guard.canActivate(first.context)).toBe(true);
    expect(first.headers).toEqual({ 'X-RateLimit-Limit': '1', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': String(Math.ceil((T0 + 60_000) / 1000)) });
    const second = call(Controller.prototype.strict, session);
    await expect(guard.canActivate(second.context)).rejects.toBeInstanceOf(ThrottlerException);
    expect(second.headers['X-RateLimit-Limit']).toBe('1');
    // The module's limit (5) still counts the same bucket on the other routes: 2 hits so far, 3 left.
    const other = call(Controller.prototype.first, session);
    expect(await guard.canActivate(other.context)).toBe(true);
    expect(other.headers).toEqual({ 'X-RateLimit-Limit': '5', 'X-RateLimit-Remaining': '2', 'X-RateLimit-Reset': String(Math.ceil((T0 + 60_000) / 1000)) });
  });
});
