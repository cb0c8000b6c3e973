import { CanActivate, ExecutionContext, Injectable, Logger } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ThrottlerException } from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { Settings } from '../../../../shared/config/settings';
import { readBodyAfterGuard } from '../../../../shared/http/body-parsing';
import { requestIdOf } from '../../../../shared/http/request-id';
import { Clock } from '../../../../shared/kernel/clock/clock';
import { forbidden, invalidRequest, notFound, unauthorized } from '../../../../shared/kernel/errors/domain-error';
import { AuditTrail } from '../../../audit/application/audit-trail.port';
import { CredentialCache } from '../../../auth/application/credential-cache';
import { hashToken } from '../../../auth/domain/tokens';
import { FixedWindowRateLimitStorage } from '../../../auth/infrastructure/rate-limit.storage';
import { RATE_LIMIT_MESSAGE, RATE_LIMIT_WINDOW_MS } from '../../../auth/interface/http/rate-limit.guard';
import { StaffDirectory } from '../../application/staff.port';
import { JUSTIFICATION, StaffPrincipal, isStaffToken } from '../../domain/staff';
import type { AdminRouteRule } from './admin.decorators';

const ADMIN_ROUTE_METADATA = 'cds:admin-route';
const INVALID_STAFF_TOKEN = 'A staff token is required (Authorization: Bearer cds_staff_…); customer tokens are not accepted here';

/** One per process: a staff token's row is read at most once a second (a disabled member is refused within 1 s everywhere). */
export class StaffTokenCache extends CredentialCache {}

/** The client's address as the audit keeps it (an IPv4 client on a dual-stack socket as plain IPv4). */
function clientIp(req: Request): string | null {
  const ip = req.ip ?? req.socket.remoteAddress ?? null;
  return ip?.startsWith('::ffff:') && ip.includes('.') ? ip.slice('::ffff:'.length) : ip;
}

/**
 * The admin API's guard, on every admin controller (admin.md):
 * 401 without a live staff token (a customer token or session included), 429 past
 * ADMIN_RATE_LIMIT_PER_MINUTE per token, 403 for a role the route does not give, 400 without a
 * valid X-Justification where the route needs one; then the body is read. Every request that
 * passes authentication writes one staff audit row when its answer is sent (its status), and a
 * successful read of an organization's data one `staff.access` entry in that organization's audit log.
 */
@Injectable()
export class AdminGuard implements CanActivate {
  private readonly logger = new Logger('AdminAudit');

  constructor(
    private readonly reflector: Reflector,
    private readonly staff: StaffDirectory,
    private readonly cache: StaffTokenCache,
    private readonly clock: Clock,
    private readonly settings: Settings,
    private readonly windows: FixedWindowRateLimitStorage,
    private readonly auditTrail: AuditTrail,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<Request>();
    const res = context.switchToHttp().getResponse<Response>();
    // Defence in depth: app.factory.ts already answers 404 to admin paths off the admin listener.
    if (req.adminListener !== true) throw notFound(`Cannot ${req.method} ${req.path}`);
    const rule = this.reflector.get<AdminRouteRule | undefined>(ADMIN_ROUTE_METADATA, context.getHandler());
    if (!rule) throw forbidden('This route declares no access rule and is closed');

    const principal = await this.authenticate(req.headers.authorization);
    req.staff = principal;
    this.auditWhenAnswered(req, res, principal);

    const key = `admin:${principal.tokenId}`;
    const limit = this.settings.adminRateLimitPerMinute;
    const record = await this.windows.increment(key, RATE_LIMIT_WINDOW_MS, limit);
    res.setHeader('X-RateLimit-Limit', String(limit));
    res.setHeader('X-RateLimit-Remaining', String(Math.max(0, limit - record.totalHits)));
    res.setHeader('X-RateLimit-Reset', String(Math.ceil(record.resetAtMs / 1000)));
    if (record.totalHits > limit) {
      res.setHeader('Retry-After', String(Math.max(1, Math.ceil((record.resetAtMs - this.clock.now().getTime()) / 1000))));
      throw new ThrottlerException(RATE_LIMIT_MESSAGE);
    }

    if (!rule.roles.includes(principal.role)) throw forbidden(`The ${principal.role} role may not call this route`);
    const justification = req.headers['x-justification'];
    if (justification !== undefined || rule.justification) {
      if (typeof justification !== 'string' || !JUSTIFICATION.test(justification)) {
        throw invalidRequest('X-Justification is required here: 1 to 200 printable characters (a ticket id or a reason)', { field: 'X-Justification' });
      }
      req.justification = justification;
    }
    return readBodyAfterGuard(context);
  }

  private async authenticate(authorization: string | undefined): Promise<StaffPrincipal> {
    const match = authorization === undefined ? null : /^Bearer (\S+)$/i.exec(authorization.trim());
    if (!match || !isStaffToken(match[1])) throw unauthorized(INVALID_STAFF_TOKEN);
    const found = await this.cache.get(hashToken(match[1]), async () => {
      const p = await this.staff.principalOf(hashToken(match[1]), this.clock.now());
      return p && { id: p.tokenId, ...p };
    });
    if (!found) throw unauthorized('The staff token is unknown, expired or revoked, or its staff member is disabled');
    return { staffId: found.staffId, tokenId: found.tokenId, role: found.role };
  }

  private auditWhenAnswered(req: Request, res: Response, principal: StaffPrincipal): void {
    const requestId = requestIdOf(req);
    const ip = clientIp(req);
    res.once('finish', () => {
      const route = `${req.baseUrl ?? ''}${(req.route as { path?: string } | undefined)?.path ?? req.path}`;
      const params = req.params as Record<string, string | undefined>;
      const target = req.staffTarget ?? {};
      const organizationId = target.organizationId ?? (route.startsWith('/admin/v1/organizations/:id') ? (params.id ?? null) : null);
      const targetId = target.targetId ?? params.id ?? null;
      const work = async () => {
        await this.staff.audit({
          staffId: principal.staffId,
          role: principal.role,
          method: req.method,
          route,
          organizationId,
          targetType: target.targetType ?? (targetId ? targetId.slice(0, Math.max(0, targetId.indexOf('_'))) || null : null),
          targetId,
          justification: req.justification ?? null,
          requestId,
          ip,
          status: res.statusCode,
          changes: res.statusCode < 400 ? (req.staffChanges ?? null) : null,
        });
        // The customer sees each successful read of its data (writes record their own entries).
        if (organizationId && (req.method === 'GET' || req.method === 'HEAD') && res.statusCode < 400) {
          await this.auditTrail.record({
            orgId: organizationId,
            actorType: 'staff',
            actorId: principal.role,
            action: 'staff.access',
            targetId: target.targetId ?? organizationId,
            ipAddress: null,
            requestId,
            clientRequestId: null,
            data: { justification: req.justification ?? null, route },
          });
        }
      };
      work().catch((err: unknown) => this.logger.error(`The staff audit of request ${requestId} was not written: ${err instanceof Error ? err.message : String(err)}`));
    });
  }
}
