import { ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import {
  InjectThrottlerOptions,
  InjectThrottlerStorage,
  ThrottlerException,
  ThrottlerGuard,
  type ThrottlerModuleOptions,
  type ThrottlerRequest,
  type ThrottlerStorage,
  normalizeIp,
} from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { Settings } from '../../../../shared/config/settings';
import { Clock } from '../../../../shared/kernel/clock/clock';
import type { FixedWindowRecord } from '../../infrastructure/rate-limit.storage';

/** Fixed windows of one minute (decisions.md "Rate limits"). */
export const RATE_LIMIT_WINDOW_MS = 60_000;

export const RATE_LIMIT_MESSAGE = 'Too many requests; retry after the number of seconds in Retry-After';

/** The throttler's options: one limit, RATE_LIMIT_PER_MINUTE per window. */
export function rateLimitOptions(settings: Settings): ThrottlerModuleOptions {
  return {
    throttlers: [{ name: 'default', ttl: RATE_LIMIT_WINDOW_MS, limit: settings.rateLimitPerMinute }],
    errorMessage: RATE_LIMIT_MESSAGE,
  };
}

/**
 * The second global guard, between authentication (401) and permission (403):
 * - one bucket per API key and one per user (shared by all of the user's sessions) across every
 *   route, and one per client IP on public routes (login, signup);
 * - X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset (Unix seconds when the
 *   window ends) on every response that gets this far, errors included, and on the 429 itself,
 *   which also carries Retry-After (whole seconds, at least 1).
 * Routes marked `@SkipThrottle()` (health checks) are neither counted nor given headers.
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() storage: ThrottlerStorage,
    reflector: Reflector,
    private readonly clock: Clock,
  ) {
    super(options, storage, reflector);
  }

  /**
   * Whose bucket: the user for sessions (all of a user's sessions share it: logging in again does
   * not multiply the limit), the API key for keys (each key its own), else the client IP.
   */
  protected override async getTracker(req: Request): Promise<string> {
    if (req.credential?.kind === 'session') return `user:${req.credential.userId}`;
    if (req.credential) return `cred:${req.credential.id}`;
    return `ip:${normalizeIp(req.ip ?? req.socket.remoteAddress ?? 'unknown', this.ipv6SubnetPrefix)}`;
  }

  /** One bucket per tracker, whatever the route (the library's default is per route). */
  protected override generateKey(_context: ExecutionContext, tracker: string, throttlerName: string): string {
    return `${throttlerName}:${tracker}`;
  }

  protected override async handleRequest({ context, limit, ttl, throttler, blockDuration, getTracker, generateKey }: ThrottlerRequest): Promise<boolean> {
    const http = context.switchToHttp();
    const req = http.getRequest<Request>();
    const res = http.getResponse<Response>();
    const tracker = await getTracker(req, context);
    const key = generateKey(context, tracker, throttler.name ?? 'default');
    const record = (await this.storageService.increment(key, ttl, limit, blockDuration, throttler.name ?? 'default')) as FixedWindowRecord;

    res.setHeader('X-RateLimit-Limit', String(limit));
    res.setHeader('X-RateLimit-Remaining', String(Math.max(0, limit - record.totalHits)));
    res.setHeader('X-RateLimit-Reset', String(Math.ceil(record.resetAtMs / 1000)));
    if (record.isBlocked) {
      const secondsLeft = Math.max(1, Math.ceil((record.resetAtMs - this.clock.now().getTime()) / 1000));
      res.setHeader('Retry-After', String(secondsLeft));
      throw new ThrottlerException(RATE_LIMIT_MESSAGE);
    }
    return true;
  }
}
