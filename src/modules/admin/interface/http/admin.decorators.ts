import { ExecutionContext, SetMetadata, UseGuards, applyDecorators, createParamDecorator } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader } from '@nestjs/swagger';
import { SkipThrottle } from '@nestjs/throttler';
import type { Request } from 'express';
import { DeferBody } from '../../../../shared/http/body-parsing';
import { StaffOnly } from '../../../auth/interface/http/access.decorators';
import { StaffPrincipal, StaffRole } from '../../domain/staff';
import { AdminGuard } from './admin.guard';

export const ADMIN_ROUTE_METADATA = 'cds:admin-route';
export const STAFF_BEARER_SCHEME = 'staff-token';

export interface AdminRouteRule {
  /** The roles that may call the route (403 forbidden for the others). */
  roles: readonly StaffRole[];
  /** The route names an organization or reads one's resources: X-Justification required (400 without). */
  justification?: boolean;
}

declare module 'express-serve-static-core' {
  interface Request {
    /** The request came in on the admin listener (app.factory.ts). */
    adminListener?: boolean;
    /** Set by AdminGuard: the staff member calling. */
    staff?: StaffPrincipal;
    /** Set by AdminGuard: the X-Justification sent. */
    justification?: string;
    /** What the staff audit row names: set by the handler (or taken from the route's :id). */
    staffTarget?: { organizationId?: string | null; targetType?: string | null; targetId?: string | null };
    /** Set by the handler of a write: what it changed, `{before, after}`, kept in the staff audit row. */
    staffChanges?: Record<string, unknown>;
  }
}

/** The admin module's controllers: staff tokens only, no customer guard or rate limit, the body read after the staff is known. */
export const AdminController = (): ClassDecorator => applyDecorators(StaffOnly(), SkipThrottle(), DeferBody(), UseGuards(AdminGuard), ApiBearerAuth(STAFF_BEARER_SCHEME));

/** Who may call the route, and whether it needs X-Justification. */
export const AdminRoute = (rule: AdminRouteRule): MethodDecorator =>
  applyDecorators(
    SetMetadata(ADMIN_ROUTE_METADATA, rule),
    ...(rule.justification
      ? [ApiHeader({ name: 'X-Justification', required: true, description: 'Why staff looks at or changes this organization: a ticket id or a reason (1-200 printable characters); shown to the customer' })]
      : []),
  );

export const CurrentStaff = createParamDecorator((_data: unknown, ctx: ExecutionContext): StaffPrincipal & { justification: string | null } => {
  const req = ctx.switchToHttp().getRequest<Request>();
  if (!req.staff) throw new Error('CurrentStaff used on a route without the admin guard');
  return { ...req.staff, justification: req.justification ?? null };
});

/** Names what the request is about, for the staff audit row (and the customer's staff.access entry). */
export function auditTarget(req: Request, target: { organizationId?: string | null; targetType?: string | null; targetId?: string | null }): void {
  req.staffTarget = { ...req.staffTarget, ...target };
}

/** What a write changed, `{before, after}`, for the staff audit row. */
export function auditChanges(req: Request, changes: { before: unknown; after: unknown }): void {
  req.staffChanges = changes;
}
