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

  /** Per route (handler, then controller): skipped, counted on the module's one limit, or declaring its own (`@Throttle`). */
  private readonly routes = new WeakMap<object, Map<object, 'skip' | 'plain' | 'own'>>();

  /**
   * The library's canActivate reads six metadata keys per throttler and awaits each value on every
   * request; a route's answer never changes, so it is read once. Routes with their own limits, or
   * several throttlers configured, take the library's path.
   */
  override canActivate(context: ExecutionContext): Promise<boolean> {
    const kind = this.throttlers.length === 1 ? this.routeKind(context) : 'own';
    if (kind === 'skip') return Promise.resolve(true);
    if (kind === 'own') return super.canActivate(context);
    const throttler = this.throttlers[0];
    const ttl = throttler.ttl as number;
    return this.handleRequest({
      context,
      limit: throttler.limit as number,
      ttl,
      throttler,
      blockDuration: (throttler.blockDuration as number | undefined) ?? ttl,
      getTracker: this.commonOptions.getTracker!,
      generateKey: this.commonOptions.generateKey!,
    });
  }

  private routeKind(context: ExecutionContext): 'skip' | 'plain' | 'own' {
    const handler = context.getHandler();
    const controller = context.getClass();
    let byController = this.routes.get(handler);
    if (!byController) this.routes.set(handler, (byController = new Map()));
    let kind = byController.get(controller);
    if (kind === undefined) {
      const throttler = this.throttlers[0];
      const name = throttler.name ?? 'default';
      const declared = (key: string): unknown => this.reflector.getAllAndOverride(`THROTTLER:${key}${name}`, [handler, controller]);
      const dynamic = [throttler.limit, throttler.ttl, throttler.blockDuration].some((v) => typeof v === 'function');
      const own =
        dynamic ||
        throttler.skipIf !== undefined ||
        this.commonOptions.skipIf !== undefined ||
        throttler.ignoreUserAgents !== undefined ||
        this.commonOptions.ignoreUserAgents !== undefined ||
        ['LIMIT', 'TTL', 'BLOCK_DURATION', 'TRACKER', 'KEY_GENERATOR'].some((key) => declared(key) !== undefined);
      kind = declared('SKIP') ? 'skip' : own ? 'own' : 'plain';
      byController.set(controller, kind);
    }
    return kind;
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
