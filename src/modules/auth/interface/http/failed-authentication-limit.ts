import { Injectable } from '@nestjs/common';
import { normalizeIp } from '@nestjs/throttler';
import type { Request } from 'express';
import { Settings } from '../../../../shared/config/settings';
import { Clock } from '../../../../shared/kernel/clock/clock';
import { DomainError } from '../../../../shared/kernel/errors/domain-error';
import { FixedWindowRateLimitStorage } from '../../infrastructure/rate-limit.storage';

/** The window in which invalid bearer tokens of one client address are counted (AUTH_FAILURES_PER_MINUTE of them). */
export const FAILED_AUTHENTICATION_WINDOW_MS = 60_000;
/** Addresses this process remembers as over the limit; beyond it the oldest are forgotten (they are still counted). */
const MAX_BLOCKED_ADDRESSES = 10_000;
/** IPv6 clients are counted by their /64, as the rate limit counts them. */
const IPV6_SUBNET_PREFIX = 64;

/**
 * 429 rate_limited for an address that presented too many invalid tokens; the filter sends
 * Retry-After, the guard the X-RateLimit-* headers of this limit (`limit`, `resetAtMs`).
 */
export class TooManyFailedAuthentications extends DomainError {
  constructor(
    readonly retryAfterSeconds: number,
    readonly limit: number,
    readonly resetAtMs: number,
  ) {
    super('rate_limited', `Too many invalid tokens from this address; retry after ${retryAfterSeconds} seconds (Retry-After)`);
  }
}

/** The client address counted: the one the rate limit uses (req.ip, as 'trust proxy' decides). */
export function failedAuthenticationAddress(req: Request): string {
  return normalizeIp(req.ip ?? req.socket.remoteAddress ?? 'unknown', IPV6_SUBNET_PREFIX);
}

/**
 * Failed authentications (a bearer token presented that is unknown, revoked, expired or not a
 * token) counted per client address in fixed windows of a minute, in the rate limit's storage
 * (Redis when configured, so every process counts them; memory otherwise). Past the limit the
 * address is answered 429 until its window ends, before its token is looked up: this process
 * remembers the address as blocked, so a blocked address costs no lookup and no count. Another
 * process learns it at the address's next failure there (one lookup, then blocked too).
 */
@Injectable()
export class FailedAuthenticationLimit {
  private readonly blockedUntil = new Map<string, number>();

  constructor(
    private readonly storage: FixedWindowRateLimitStorage,
    private readonly clock: Clock,
    private readonly settings: Settings,
  ) {}

  /** Whether this process knows of any address over the limit (check() can only refuse then). */
  anyBlocked(): boolean {
    return this.blockedUntil.size > 0;
  }

  /** 429 when this process knows the address is over the limit in its current window. */
  check(address: string): void {
    const until = this.blockedUntil.get(address);
    if (until === undefined) return;
    const leftMs = until - this.clock.now().getTime();
    if (leftMs > 0) throw new TooManyFailedAuthentications(Math.max(1, Math.ceil(leftMs / 1000)), this.settings.authFailuresPerMinute, until);
    this.blockedUntil.delete(address);
  }

  /** Counts a failure of the address; 429 (instead of the 401) once it is past the limit. */
  async failed(address: string): Promise<void> {
    const record = await this.storage.increment(`authfail:ip:${address}`, FAILED_AUTHENTICATION_WINDOW_MS, this.settings.authFailuresPerMinute);
    if (!record.isBlocked) return;
    if (this.blockedUntil.size >= MAX_BLOCKED_ADDRESSES && !this.blockedUntil.has(address)) {
      this.blockedUntil.delete(this.blockedUntil.keys().next().value as string);
    }
    this.blockedUntil.set(address, record.resetAtMs);
    throw new TooManyFailedAuthentications(
      Math.max(1, Math.ceil((record.resetAtMs - this.clock.now().getTime()) / 1000)),
      this.settings.authFailuresPerMinute,
      record.resetAtMs,
    );
  }
}
