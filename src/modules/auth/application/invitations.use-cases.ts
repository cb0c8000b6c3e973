import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { DomainError, conflict, forbidden, invalidRequest, invalidState, notFound } from '../../../shared/kernel/errors/domain-error';
import { newId } from '../../../shared/kernel/ids/ids';
import { decodeCursor, encodeCursor, parseLimit } from '../../../shared/kernel/pagination/cursor';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { normalizeEmail } from '../domain/email';
import {
  INVITATION_LIFETIME_MS,
  INVITATION_STATUSES,
  Invitation,
  InvitationStatus,
  MAX_PENDING_INVITATIONS,
  invitationStatus,
  isInvitationToken,
  newInvitationToken,
} from '../domain/invitation';
import { Principal, Role } from '../domain/principal';
import { hashToken } from '../domain/tokens';
import { Accounts, OrganizationRecord } from './accounts.port';
import { lockedManagerRole, ownerOnly } from './members.use-cases';
import { Invitations, Organizations } from './organizations.port';
import { SignedInUser, checkRoomForOneMore } from './organizations.use-cases';

/** The one answer for a token that is unknown, expired, revoked or already used (accounts.md). */
export const INVITATION_NOT_FOUND = 'No pending invitation has this token: it is unknown, expired, revoked or already accepted';

/**
 * The pending invitation holding `token`, its row locked until the transaction ends (so that
 * concurrent accepts of one invitation run one after the other, and only the first finds it
 * pending); undefined for a malformed, unknown, expired, revoked or accepted token.
 */
export async function pendingInvitation(invitations: Invitations, token: string, now: Date): Promise<(Invitation & { organization: OrganizationRecord }) | undefined> {
  if (!isInvitationToken(token)) return undefined;
  const found = await invitations.findByTokenForUpdate(hashToken(token));
  return found && invitationStatus(found, now) === 'pending' ? found : undefined;
}

/** POST /v1/invitations (and POST /v1/members): admins and owners invite; only an owner invites an owner. */
@Injectable()
export class CreateInvitation {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly accounts: Accounts,
    private readonly invitations: Invitations,
    private readonly audit: AuditTrail,
    private readonly clock: Clock,
  ) {}

  /** The invitation and its token: the token is in this answer only (its SHA-256 is stored). */
  async execute(principal: Principal, input: { email: string; role: Role }, ip: string | null): Promise<{ invitation: Invitation; token: string }> {
    const email = normalizeEmail(input.email);
    return this.uow.run(async () => {
      const myRole = await lockedManagerRole(this.accounts, principal);
      if (input.role === 'owner' && myRole !== 'owner') throw ownerOnly();
      // Only this organization's members are looked at: whether the email has an account is never read.
      if ((await this.accounts.members(principal.orgId)).some((m) => m.email === email)) {
        throw conflict('This email belongs to a member of the organization already');
      }
      const now = this.clock.now();
      if ((await this.invitations.countPending(principal.orgId, now)) >= MAX_PENDING_INVITATIONS) {
        throw new DomainError('quota_exceeded', `An organization may hold at most ${MAX_PENDING_INVITATIONS} pending invitations; revoke one first`, {
          limit: MAX_PENDING_INVITATIONS,
        });
      }
      const token = newInvitationToken();
      const invitation = await this.invitations.create({
        id: newId('inv'),
        orgId: principal.orgId,
        email,
        role: input.role,
        tokenHash: hashToken(token),
        createdBy: principal.userId,
        createdAt: now,
        expiresAt: new Date(now.getTime() + INVITATION_LIFETIME_MS),
      });
      await this.audit.record({
        orgId: principal.orgId,
        actorType: 'user',
        actorId: principal.userId,
        action: 'invitation.create',
        targetId: invitation.id,
        targetType: 'invitation',
        ipAddress: ip,
        data: { email, role: input.role },
      });
      return { invitation, token };
    });
  }
}

/** GET /v1/invitations: newest first, optionally one status. */
@Injectable()
export class ListInvitations {
  constructor(
    private readonly invitations: Invitations,
    private readonly clock: Clock,
  ) {}

  async execute(principal: Principal, input: { status?: string; limit?: string; cursor?: string }): Promise<{ invitations: Invitation[]; nextCursor: string | null }> {
    if (input.status !== undefined && !(INVITATION_STATUSES as readonly string[]).includes(input.status)) {
      throw invalidRequest(`status must be one of ${INVITATION_STATUSES.join(', ')}`, { field: 'status' });
    }
    const limit = parseLimit(input.limit);
    const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor);
    const page = await this.invitations.list(principal.orgId, input.status as InvitationStatus | undefined, this.clock.now(), limit, after);
    return { invitations: page.items, nextCursor: page.next && encodeCursor(page.next) };
  }
}

/** DELETE /v1/invitations/{id}: 204 (again 204 when revoked already); an accepted one 409 invalid_state. */
@Injectable()
export class RevokeInvitation {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly accounts: Accounts,
    private readonly invitations: Invitations,
    private readonly audit: AuditTrail,
    private readonly clock: Clock,
  ) {}

  async execute(principal: Principal, id: string, ip: string | null): Promise<void> {
    await this.uow.run(async () => {
      const myRole = await lockedManagerRole(this.accounts, principal);
      const invitation = await this.invitations.findForUpdate(principal.orgId, id);
      if (!invitation) throw notFound(`Invitation ${id} not found`);
      if (invitation.role === 'owner' && myRole !== 'owner') throw ownerOnly();
      if (invitation.acceptedAt) throw invalidState('This invitation was accepted already; remove the member instead');
      if (invitation.revokedAt) return;
      await this.invitations.markRevoked(id, this.clock.now());
      await this.audit.record({
        orgId: principal.orgId,
        actorType: 'user',
        actorId: principal.userId,
        action: 'invitation.revoke',
        targetId: id,
        targetType: 'invitation',
        ipAddress: ip,
        data: { email: invitation.email, role: invitation.role },
      });
    });
  }
}

/**
 * POST /v1/invitations/accept: the token first (404, one message for unknown, expired, revoked
 * or used), then the email (403), then membership (409 conflict), then the user's limit of
 * organizations (409 quota_exceeded).
 */
@Injectable()
export class AcceptInvitation {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly accounts: Accounts,
    private readonly organizations: Organizations,
    private readonly invitations: Invitations,
    private readonly audit: AuditTrail,
    private readonly clock: Clock,
  ) {}

  async execute(user: SignedInUser, token: string, ip: string | null): Promise<{ organization: OrganizationRecord; role: Role }> {
    return this.uow.run(async () => {
      const now = this.clock.now();
      const invitation = await pendingInvitation(this.invitations, token, now);
      if (!invitation) throw notFound(INVITATION_NOT_FOUND);
      const email = await this.organizations.userEmail(user.userId);
      if (email !== invitation.email) throw forbidden('This invitation was made for another email address');
      if (await this.accounts.membership(user.userId, invitation.orgId)) throw conflict('You are a member of this organization already');
      await checkRoomForOneMore(this.organizations, user.userId);
      await this.accounts.addMember(invitation.orgId, user.userId, invitation.role);
      await this.invitations.markAccepted(invitation.id, user.userId, now);
      await recordAccept(this.audit, invitation, user.userId, ip);
      return { organization: invitation.organization, role: invitation.role };
    });
  }
}

/** `invitation.accept` in the inviting organization, the new member as actor. */
export function recordAccept(audit: AuditTrail, invitation: Invitation, userId: string, ip: string | null): Promise<void> {
  return audit.record({
    orgId: invitation.orgId,
    actorType: 'user',
    actorId: userId,
    action: 'invitation.accept',
    targetId: invitation.id,
    targetType: 'invitation',
    ipAddress: ip,
    data: { email: invitation.email, role: invitation.role },
  });
}
