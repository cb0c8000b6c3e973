import { Settings } from '../../../shared/config/settings';
import { Injectable, Optional } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { DomainError, invalidRequest } from '../../../shared/kernel/errors/domain-error';
import { newId } from '../../../shared/kernel/ids/ids';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { normalizeEmail } from '../domain/email';
import { Principal, Role } from '../domain/principal';
import { pendingInvitation, recordAccept } from './invitations.use-cases';
import { Invitations } from './organizations.port';
import { DUMMY_PASSWORD_HASH, hashPassword, hashToken, newSessionToken, verifyPassword } from '../domain/tokens';
import { Accounts, MembershipView, OrganizationRecord, UserRecord } from './accounts.port';
import { CredentialCache } from './credential-cache';
import { Credentials } from './credentials.port';
import { LOGIN_FAILURE_WINDOW_MS, LoginFailures, LoginThrottled, emailThrottleKey, loginDelayMs } from './login-throttle';

export const SESSION_LIFETIME_MS = 24 * 60 * 60 * 1000;

export interface SessionIssued {
  token: string;
  expiresAt: Date;
  user: UserRecord;
}

const INVALID_CREDENTIALS = (): DomainError => new DomainError('invalid_credentials', 'Wrong email or password');

@Injectable()
export class SignUp {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly accounts: Accounts,
    private readonly credentials: Credentials,
    private readonly audit: AuditTrail,
    private readonly clock: Clock,
    private readonly invitations?: Invitations,
  ) {}

  /**
   * Without `invitationToken`: the user and an organization they own. With it (a pending
   * invitation for this email): the user joins the inviting organization with the invited role,
   * and no organization is created; any other token is 400 naming invitation_token, checked
   * before anything is written.
   */
  async execute(input: {
    email: string;
    password: string;
    organizationName?: string;
    invitationToken?: string;
    ip: string | null;
  }): Promise<SessionIssued & { organization: OrganizationRecord; role: Role }> {
    const email = normalizeEmail(input.email);
    const passwordHash = await hashPassword(input.password);
    const token = newSessionToken();
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + SESSION_LIFETIME_MS);
    return this.uow.run(async () => {
      const invitation = input.invitationToken === undefined ? undefined : await this.invitationFor(input.invitationToken, email, now);
      const user = await this.accounts.createUser({ id: newId('usr'), email, passwordHash });
      const organization = invitation?.organization ?? (await this.accounts.createOrganization({ id: newId('org'), name: input.organizationName ?? '' }));
      const role: Role = invitation?.role ?? 'owner';
      await this.accounts.addMember(organization.id, user.id, role);
      if (invitation) await this.invitations!.markAccepted(invitation.id, user.id, now);
      const session = await this.credentials.createSession({ id: newId('ses'), userId: user.id, tokenHash: hashToken(token), expiresAt });
      await this.audit.record({ orgId: organization.id, actorType: 'user', actorId: user.id, action: 'auth.signup', targetId: session.id, ipAddress: input.ip });
      if (invitation) await recordAccept(this.audit, invitation, user.id, input.ip);
      return { token, expiresAt, user, organization, role };
    });
  }

  private async invitationFor(token: string, email: string, now: Date) {
    const invitation = this.invitations && (await pendingInvitation(this.invitations, token, now));
    if (!invitation || invitation.email !== email) {
      throw invalidRequest('invitation_token is not a pending invitation for this email', { field: 'invitation_token' });
    }
    return invitation;
  }
}

@Injectable()
export class LogIn {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly accounts: Accounts,
    private readonly credentials: Credentials,
    private readonly audit: AuditTrail,
    private readonly clock: Clock,
    @Optional() private readonly failures?: LoginFailures,
    @Optional() private readonly settings?: Settings,
  ) {}

  async execute(input: { email: string; password: string; ip: string | null }): Promise<SessionIssued & { organizations: MembershipView[] }> {
    const user = await this.accounts.findUserByEmail(input.email.toLowerCase());
    // Per email, beside the per-IP limit: after repeated failures the next attempt waits
    // (loginDelayMs), whatever address it comes from; the password is not even tried before.
    // Counted whether or not an account has the email, so both answer alike (status and Retry-After).
    const emailKey = emailThrottleKey(input.email, this.settings?.idempotencySecret);
    if (this.failures) {
      const recent = await this.failures.recent(emailKey, LOGIN_FAILURE_WINDOW_MS);
      const waitMs = loginDelayMs(recent.count) - (recent.lastAgoMs ?? Number.POSITIVE_INFINITY);
      if (waitMs > 0) throw new LoginThrottled(Math.max(1, Math.ceil(waitMs / 1000)));
    }
    // Hash even when the user is missing, so the answer takes as long either way; the failure is
    // recorded the same way in both cases (one audit row), and answered with the same error.
    const ok = await verifyPassword(input.password, user?.passwordHash ?? DUMMY_PASSWORD_HASH);
    if (!user || !ok) {
      await this.audit.record({
        orgId: null,
        actorType: user ? 'user' : 'anonymous',
        actorId: user?.id ?? null,
        action: 'auth.login_failed',
        targetId: emailKey,
        ipAddress: input.ip,
        data: { reason: user ? 'wrong_password' : 'unknown_email' },
      });
      throw INVALID_CREDENTIALS();
    }
    const token = newSessionToken();
    const expiresAt = new Date(this.clock.now().getTime() + SESSION_LIFETIME_MS);
    return this.uow.run(async () => {
      const session = await this.credentials.createSession({ id: newId('ses'), userId: user.id, tokenHash: hashToken(token), expiresAt });
      const organizations = await this.accounts.memberships(user.id);
      // One row per organization of the user, so each organization's audit log shows the sign-in;
      // written in organization id order, the order every transaction takes the audit counters in.
      const byId = [...organizations].sort((a, b) => (a.organization.id < b.organization.id ? -1 : a.organization.id > b.organization.id ? 1 : 0));
      for (const membership of byId.length > 0 ? byId : [undefined]) {
        await this.audit.record({
          orgId: membership?.organization.id ?? null,
          actorType: 'user',
          actorId: user.id,
          action: 'auth.login',
          targetId: session.id,
          ipAddress: input.ip,
        });
      }
      return { token, expiresAt, user, organizations };
    });
  }
}

@Injectable()
export class LogOut {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly credentials: Credentials,
    private readonly audit: AuditTrail,
    private readonly clock: Clock,
    private readonly cache: CredentialCache = new CredentialCache(),
  ) {}

  async execute(principal: Principal, ip: string | null): Promise<void> {
    if (principal.kind !== 'session') throw new DomainError('forbidden', 'Only a session can log out');
    await this.uow.run(async () => {
      await this.credentials.revokeSession(principal.credentialId, this.clock.now());
      await this.audit.record({ orgId: principal.orgId, actorType: 'user', actorId: principal.userId, action: 'auth.logout', targetId: principal.credentialId, ipAddress: ip });
    });
    // Committed: the session stops working on this process at once (others within the cache's 1 s).
    this.cache.evict(principal.credentialId);
  }
}
