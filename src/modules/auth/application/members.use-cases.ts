import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { conflict, forbidden, notFound } from '../../../shared/kernel/errors/domain-error';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { normalizeEmail } from '../domain/email';
import { Principal, Role } from '../domain/principal';
import { Accounts, MemberRecord } from './accounts.port';

/**
 * Members of an organization (lifecycle.md "Accounts"). An admin adds, changes and removes
 * developers, viewers and admins; only an owner adds an owner, grants owner or takes it away;
 * anyone may remove themselves; the last owner can be neither demoted nor removed. Every change
 * runs under the organization's lock, so two owners demoting each other at once cannot leave none.
 */
const MANAGERS: readonly Role[] = ['admin', 'owner'];

const ownerOnly = () => forbidden('Only an owner may add an owner, grant the owner role or take it away');
const lastOwner = () => conflict('An organization keeps at least one owner: this member is its last owner');

const notManager = (role: string) => forbidden(`Role ${role} may not manage members; it needs one of: admin, owner`);

function requireManager(principal: Principal): void {
  if (principal.kind !== 'session' || !MANAGERS.includes(principal.role)) throw notManager(principal.role ?? 'api_key');
}

/**
 * The caller's role read again under the organization's lock: a role changed by a concurrent
 * request (say, demoted by another owner a moment ago) counts, not the one seen at authentication.
 */
async function lockedRole(accounts: Accounts, principal: Principal): Promise<Role> {
  await accounts.lockOrganization(principal.orgId);
  const me = principal.userId ? await accounts.member(principal.orgId, principal.userId) : undefined;
  if (!me) throw forbidden('You are no longer a member of this organization');
  return me.role;
}

@Injectable()
export class ListMembers {
  constructor(private readonly accounts: Accounts) {}

  execute(principal: Principal): Promise<MemberRecord[]> {
    return this.accounts.members(principal.orgId);
  }
}

@Injectable()
export class AddMember {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly accounts: Accounts,
    private readonly audit: AuditTrail,
  ) {}

  async execute(principal: Principal, input: { email: string; role: Role }, ip: string | null): Promise<MemberRecord> {
    requireManager(principal);
    if (input.role === 'owner' && principal.role !== 'owner') throw ownerOnly();
    const email = normalizeEmail(input.email);
    return this.uow.run(async () => {
      const user = await this.accounts.findUserByEmail(email);
      if (!user) throw notFound('No user has an account with this email; they sign up first');
      const myRole = await lockedRole(this.accounts, principal);
      if (!MANAGERS.includes(myRole)) throw notManager(myRole);
      if (input.role === 'owner' && myRole !== 'owner') throw ownerOnly();
      if (await this.accounts.member(principal.orgId, user.id)) throw conflict('This user is a member of the organization already');
      await this.accounts.addMember(principal.orgId, user.id, input.role);
      await this.audit.record({
        orgId: principal.orgId,
        actorType: 'user',
        actorId: principal.userId,
        action: 'member.add',
        targetId: user.id,
        ipAddress: ip,
        data: { email: user.email, role: input.role },
      });
      return (await this.accounts.member(principal.orgId, user.id))!;
    });
  }
}

@Injectable()
export class ChangeMemberRole {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly accounts: Accounts,
    private readonly audit: AuditTrail,
  ) {}

  async execute(principal: Principal, userId: string, role: Role, ip: string | null): Promise<MemberRecord> {
    requireManager(principal);
    if (role === 'owner' && principal.role !== 'owner') throw ownerOnly();
    return this.uow.run(async () => {
      const myRole = await lockedRole(this.accounts, principal);
      if (!MANAGERS.includes(myRole)) throw notManager(myRole);
      if (role === 'owner' && myRole !== 'owner') throw ownerOnly();
      const member = await this.accounts.member(principal.orgId, userId);
      if (!member) throw notFound(`Member ${userId} not found`);
      if (member.role === 'owner' && myRole !== 'owner') throw ownerOnly();
      if (member.role === role) return member;
      if (member.role === 'owner' && (await this.accounts.countOwners(principal.orgId)) <= 1) throw lastOwner();
      await this.accounts.setRole(principal.orgId, userId, role);
      await this.audit.record({
        orgId: principal.orgId,
        actorType: 'user',
        actorId: principal.userId,
        action: 'member.role_change',
        targetId: userId,
        ipAddress: ip,
        data: { email: member.email, from: member.role, to: role },
      });
      return { ...member, role };
    });
  }
}

@Injectable()
export class RemoveMember {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly accounts: Accounts,
    private readonly audit: AuditTrail,
  ) {}

  /** The member's sessions lose the organization at once: membership is checked at every request. */
  async execute(principal: Principal, userId: string, ip: string | null): Promise<void> {
    const self = principal.kind === 'session' && principal.userId === userId;
    if (!self) requireManager(principal);
    await this.uow.run(async () => {
      const myRole = await lockedRole(this.accounts, principal);
      if (!self && !MANAGERS.includes(myRole)) throw notManager(myRole);
      const member = await this.accounts.member(principal.orgId, userId);
      if (!member) throw notFound(`Member ${userId} not found`);
      if (member.role === 'owner' && !self && myRole !== 'owner') throw ownerOnly();
      if (member.role === 'owner' && (await this.accounts.countOwners(principal.orgId)) <= 1) throw lastOwner();
      await this.accounts.removeMember(principal.orgId, userId);
      await this.audit.record({
        orgId: principal.orgId,
        actorType: 'user',
        actorId: principal.userId,
        action: 'member.remove',
        targetId: userId,
        ipAddress: ip,
        data: { email: member.email, role: member.role },
      });
    });
  }
}

export type { MemberRecord };
