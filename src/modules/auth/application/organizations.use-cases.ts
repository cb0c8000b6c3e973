import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { DomainError, forbidden, notFound } from '../../../shared/kernel/errors/domain-error';
import { newId } from '../../../shared/kernel/ids/ids';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { MAX_ORGANIZATIONS_PER_USER } from '../domain/invitation';
import { validOrganizationName } from '../domain/organization';
import { Role } from '../domain/principal';
import { Accounts, MembershipView } from './accounts.port';
import { Organizations } from './organizations.port';

/** The signed-in user a route acts for (sessions only, no organization selected). */
export interface SignedInUser {
  userId: string;
  sessionId: string;
}

/** An organization as the caller sees it: with their role. */
export interface OrganizationView {
  id: string;
  name: string;
  role: Role;
  createdAt: Date;
}

const view = (m: MembershipView): OrganizationView => ({ id: m.organization.id, name: m.organization.name, role: m.role, createdAt: m.organization.createdAt });

export const organizationLimit = (): DomainError =>
  new DomainError('quota_exceeded', `A user may belong to at most ${MAX_ORGANIZATIONS_PER_USER} organizations; leave one first`, { limit: MAX_ORGANIZATIONS_PER_USER });

/**
 * Under the lock on the user: refuses (409 quota_exceeded) when they belong to the most
 * organizations a user may. Every way of joining (create, accept, signup) calls it before adding.
 */
export async function checkRoomForOneMore(organizations: Organizations, userId: string): Promise<void> {
  await organizations.lockUser(userId);
  if ((await organizations.countMemberships(userId)) >= MAX_ORGANIZATIONS_PER_USER) throw organizationLimit();
}

/** GET /v1/organizations: the caller's, oldest membership first (the first is the default organization). */
@Injectable()
export class ListOrganizations {
  constructor(private readonly accounts: Accounts) {}

  async execute(user: SignedInUser): Promise<OrganizationView[]> {
    return (await this.accounts.memberships(user.userId)).map(view);
  }
}

/** POST /v1/organizations: a new organization owned by the caller alone, with empty wallets. */
@Injectable()
export class CreateOrganization {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly accounts: Accounts,
    private readonly organizations: Organizations,
    private readonly audit: AuditTrail,
  ) {}

  async execute(user: SignedInUser, input: { name: string }, ip: string | null): Promise<OrganizationView> {
    const name = validOrganizationName(input.name);
    return this.uow.run(async () => {
      await checkRoomForOneMore(this.organizations, user.userId);
      const org = await this.accounts.createOrganization({ id: newId('org'), name });
      await this.accounts.addMember(org.id, user.userId, 'owner');
      await this.organizations.openEmptyWallets(org.id);
      await this.audit.record({ orgId: org.id, actorType: 'user', actorId: user.userId, action: 'organization.create', targetId: org.id, ipAddress: ip, data: { name } });
      return { id: org.id, name: org.name, role: 'owner', createdAt: org.createdAt };
    });
  }
}

/** PATCH /v1/organizations/{id}: owners rename; other members 403; anyone else 404. */
@Injectable()
export class RenameOrganization {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly accounts: Accounts,
    private readonly organizations: Organizations,
    private readonly audit: AuditTrail,
  ) {}

  async execute(user: SignedInUser, orgId: string, input: { name: string }, ip: string | null): Promise<OrganizationView> {
    const name = validOrganizationName(input.name);
    return this.uow.run(async () => {
      await this.accounts.lockOrganization(orgId);
      const membership = (await this.accounts.memberships(user.userId)).find((m) => m.organization.id === orgId);
      if (!membership) throw notFound(`Organization ${orgId} not found`);
      if (membership.role !== 'owner') throw forbidden(`Role ${membership.role} may not rename the organization; it needs: owner`);
      if (membership.organization.name === name) return view(membership);
      const from = await this.organizations.rename(orgId, name);
      await this.audit.record({ orgId, actorType: 'user', actorId: user.userId, action: 'organization.update', targetId: orgId, ipAddress: ip, data: { name: { from, to: name } } });
      return { ...view(membership), name };
    });
  }
}
