import { CanActivate, ExecutionContext, Injectable, Optional } from '@nestjs/common';
import { OrganizationPolicy } from '../../application/organization-policy';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { DomainError, forbidden } from '../../../../shared/kernel/errors/domain-error';
import { Authenticate, INVALID_TOKEN } from '../../application/authenticate.use-case';
import { Credential, SESSIONS_ONLY, checkAccess } from '../../domain/principal';
import { ACCESS_METADATA, AccessDeclaration } from './access.decorators';
import { FailedAuthenticationLimit, TooManyFailedAuthentications, failedAuthenticationAddress } from './failed-authentication-limit';

/** Each route's declaration, read from its metadata once (the guards ask on every request). */
const declarations = new WeakMap<object, Map<object, AccessDeclaration | undefined>>();

export function accessDeclaration(reflector: Reflector, context: ExecutionContext): AccessDeclaration | undefined {
  const handler = context.getHandler();
  const controller = context.getClass();
  let byController = declarations.get(handler);
  if (!byController) declarations.set(handler, (byController = new Map()));
  if (!byController.has(controller)) {
    byController.set(controller, reflector.getAllAndOverride<AccessDeclaration | undefined>(ACCESS_METADATA, [handler, controller]));
  }
  return byController.get(controller);
}

/** A route acting for the signed-in user: any session, no organization selected; API keys 403. */
function userLevelAccess(credential: Credential): true {
  if (credential.kind !== 'session') throw forbidden(SESSIONS_ONLY);
  return true;
}

/**
 * First global guard: who is calling (401), before the rate limit (429) and permission (403).
 * Invalid tokens are counted per client address (FailedAuthenticationLimit): past the limit the
 * address is answered 429 before its token is looked up.
 */
@Injectable()
export class AuthenticationGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly authenticate: Authenticate,
    private readonly failures: FailedAuthenticationLimit,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const declaration = accessDeclaration(this.reflector, context);
    if (declaration === undefined) {
      throw forbidden('This route declares no access rule and is closed');
    }
    // Staff routes (the admin listener) have their own guard (admin/interface/http/admin.guard.ts).
    if (declaration === 'public' || declaration === 'staff') return true;
    const req = context.switchToHttp().getRequest<Request>();
    const authorization = req.headers.authorization;
    if (!authorization) {
      req.credential = await this.authenticate.identify(authorization);
      return true;
    }
    try {
      // The client's address is worked out (trust proxy, X-Forwarded-For) only when this process
      // has an address blocked, or the token is refused.
      if (this.failures.anyBlocked()) this.failures.check(failedAuthenticationAddress(req));
      try {
        req.credential = await this.authenticate.identify(authorization);
      } catch (err) {
        // A token presented and refused (unknown, revoked, expired, not a token): counted.
        if (err instanceof DomainError && err.code === 'unauthorized' && err.message === INVALID_TOKEN) await this.failures.failed(failedAuthenticationAddress(req));
        throw err;
      }
    } catch (err) {
      if (err instanceof TooManyFailedAuthentications) {
        // The headers of every 429, describing the limit that refused.
        const res = context.switchToHttp().getResponse<Response>();
        res.setHeader('X-RateLimit-Limit', String(err.limit));
        res.setHeader('X-RateLimit-Remaining', '0');
        res.setHeader('X-RateLimit-Reset', String(Math.ceil(err.resetAtMs / 1000)));
      }
      throw err;
    }
    return true;
  }
}

/**
 * Last global guard, after the rate limit: the organization (X-Org-ID, sessions only), then the
 * scope for API keys or the role for sessions (403). Sets the Principal the controllers get.
 */
@Injectable()
export class PermissionGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly authenticate: Authenticate,
    @Optional() private readonly policy?: OrganizationPolicy,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const declaration = accessDeclaration(this.reflector, context);
    if (declaration === 'public' || declaration === 'staff') return true;
    const req = context.switchToHttp().getRequest<Request>();
    if (!declaration || !req.credential) throw forbidden('Access denied');
    if (declaration.userLevel) return userLevelAccess(req.credential);
    const orgHeader = req.headers['x-org-id'] as string | undefined;
    const principal = await this.authenticate.principalFor(req.credential, orgHeader === undefined ? undefined : orgHeader.trim());
    req.principal = principal;
    const verdict = checkAccess(principal, declaration);
    if (!verdict.allowed) throw forbidden(verdict.reason);
    // A suspended organization keeps its reads; every write is 403 organization_suspended (admin.md).
    if (req.method !== 'GET' && req.method !== 'HEAD' && req.method !== 'OPTIONS') await this.policy?.assertWritable(principal.orgId);
    return true;
  }
}
