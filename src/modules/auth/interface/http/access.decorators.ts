import { ExecutionContext, SetMetadata, createParamDecorator } from '@nestjs/common';
import type { Request } from 'express';
import { AccessRule, Credential, Principal } from '../../domain/principal';

export const ACCESS_METADATA = 'cds:access';
/** 'staff': an admin route, authenticated and authorized by the admin module's own guard (staff tokens only). */
export type AccessDeclaration = AccessRule | 'public' | 'staff';

declare module 'express-serve-static-core' {
  interface Request {
    /** Set by AuthenticationGuard: the valid credential (what the rate limit counts against). */
    credential?: Credential;
    /** Set by PermissionGuard: the credential with its organization, for the controllers. */
    principal?: Principal;
  }
}

/**
 * What a route needs, in one line: `@RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })`.
 * A route without a declaration is refused (deny by default).
 */
export const RequireAccess = (rule: AccessRule): MethodDecorator & ClassDecorator => SetMetadata(ACCESS_METADATA, rule);

/** A route anyone may call without a token (signup, login, health). */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(ACCESS_METADATA, 'public' satisfies AccessDeclaration);

/** An admin route: the customer guards let it through to the admin guard, which refuses every customer credential. */
export const StaffOnly = (): MethodDecorator & ClassDecorator => SetMetadata(ACCESS_METADATA, 'staff' satisfies AccessDeclaration);

/** The authenticated caller. Only on routes with @RequireAccess. */
export const CurrentPrincipal = createParamDecorator((_data: unknown, ctx: ExecutionContext): Principal => {
  const principal = ctx.switchToHttp().getRequest<Request>().principal;
  if (!principal) throw new Error('CurrentPrincipal used on a route without authentication');
  return principal;
});

/** The caller's IP address, for the audit log (an IPv4 client on a dual-stack socket as plain IPv4). */
export const ClientIp = createParamDecorator((_data: unknown, ctx: ExecutionContext): string | null => {
  const req = ctx.switchToHttp().getRequest<Request>();
  const ip = req.ip ?? req.socket.remoteAddress ?? null;
  return ip?.startsWith('::ffff:') && ip.includes('.') ? ip.slice('::ffff:'.length) : ip;
});

/** The signed-in user of a route declared `userLevel` (sessions only, no organization selected). */
export const CurrentUser = createParamDecorator((_data: unknown, ctx: ExecutionContext): { userId: string; sessionId: string } => {
  const credential = ctx.switchToHttp().getRequest<Request>().credential;
  if (credential?.kind !== 'session') throw new Error('CurrentUser used on a route that is not userLevel');
  return { userId: credential.userId, sessionId: credential.id };
});
