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

/** A member of an organization, as GET /v1/members lists it. */
export interface MemberRecord {
  userId: string;
  email: string;
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
  /**
   * Locks the organization row until the transaction ends: member changes (and API key
   * creations) in one organization run one at a time, so "is this the last owner?" and "how many
   * keys?" are answered on the committed state, never read-then-written by two at once.
   */
  abstract lockOrganization(orgId: string): Promise<void>;
  /** The organization's members, oldest first. */
  abstract members(orgId: string): Promise<MemberRecord[]>;
  abstract member(orgId: string, userId: string): Promise<MemberRecord | undefined>;
  abstract countOwners(orgId: string): Promise<number>;
  abstract setRole(orgId: string, userId: string, role: Role): Promise<void>;
  abstract removeMember(orgId: string, userId: string): Promise<void>;
}
