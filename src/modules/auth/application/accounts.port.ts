import { Role } from '../../auth/domain/principal';

export interface UserRecord {
  id: string;
  email: string;
  passwordHash: string;
  createdAt: Date;
}

export interface OrganizationRecord {
  id: string;
  name: string;
  createdAt: Date;
}

export interface MembershipView {
  organization: OrganizationRecord;
  role: Role;
  joinedAt: Date;
}

/** Users, organizations and memberships. */
export abstract class Accounts {
  abstract organizationExists(orgId: string): Promise<boolean>;
  abstract createOrganization(org: { id: string; name: string }): Promise<OrganizationRecord>;
  abstract findUserByEmail(email: string): Promise<UserRecord | undefined>;
  /** Creates the user; throws DomainError conflict when the email is taken. */
  abstract createUser(user: { id: string; email: string; passwordHash: string }): Promise<UserRecord>;
  abstract addMember(orgId: string, userId: string, role: Role): Promise<void>;
  abstract membership(userId: string, orgId: string): Promise<Role | undefined>;
  /** The user's organizations, oldest membership first. */
  abstract memberships(userId: string): Promise<MembershipView[]>;
}
