import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { conflict, forbidden, notFound } from '../../../shared/kernel/errors/domain-error';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { Principal, Role } from '../domain/principal';
import { Clock } from '../../../shared/kernel/clock/clock';
import { Accounts, MemberRecord } from './accounts.port';
import { CredentialCache } from './credential-cache';
import { Credentials } from './credentials.port';

/**
 * Members of an organization (lifecycle.md "Accounts"). An admin adds, changes and removes
 * developers, viewers and admins; only an owner adds an owner, grants owner or takes it away;
 * anyone may remove themselves; the last owner can be neither demoted nor removed. Every change
 * runs under the organization's lock, so two owners demoting each other at once cannot leave none.
 */
const MANAGERS: readonly Role[] = ['admin', 'owner'];

export const ownerOnly = () => forbidden('Only an owner may add an owner, grant the owner role or take it away');
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

/** The caller's role under the organization's lock, refused (403) unless admin or owner. */
export async function lockedManagerRole(accounts: Accounts, principal: Principal): Promise<Role> {
  requireManager(principal);
  const myRole = await lockedRole(accounts, principal);
  if (!MANAGERS.includes(myRole)) throw notManager(myRole);
  return myRole;
}

/** What becomes of the keys a member created when they leave or drop below admin. */
export interface KeyPolicy {
  /** Revoke them in the same transaction (?revoke_api_keys=true); else they keep working. */
  revokeApiKeys: boolean;
}

/**
 * The member's active keys: revoked in this transaction when asked (each with its own
 * api_key.revoke entry, refused on this process once committed, on others within 1 s), else
 * kept. Returns the audit data naming both lists by id and name.
 */
async function settleKeysOf(
  deps: { credentials: Credentials; audit: AuditTrail; clock: Clock; cache: CredentialCache; uow: UnitOfWork },
  principal: Principal,
  userId: string,
  policy: KeyPolicy,
  ip: string | null,
): Promise<{ api_keys_kept: { id: string; name: string }[]; api_keys_revoked: { id: string; name: string }[] }> {
  const now = deps.clock.now();
  const keys = (await deps.credentials.activeApiKeysCreatedBy(principal.orgId, userId, now)).map((k) => ({ id: k.id, name: k.name }));
  if (!policy.revokeApiKeys) return { api_keys_kept: keys, api_keys_revoked: [] };
  for (const key of keys) {
    await deps.credentials.revokeApiKey(key.id, principal.orgId, now);
    deps.uow.afterCommit(() => deps.cache.evict(key.id));
    await deps.audit.record({
      orgId: principal.orgId,
      actorType: 'user',
      actorId: principal.userId,
      action: 'api_key.revoke',
      targetId: key.id,
      ipAddress: ip,
      data: { name: key.name, created_by: userId },
    });
  }
  return { api_keys_kept: [], api_keys_revoked: keys };
}

@Injectable()
export class ListMembers {
  constructor(private readonly accounts: Accounts) {}

  execute(principal: Principal): Promise<MemberRecord[]> {
    return this.accounts.members(principal.orgId);
  }
}

@Injectable()
export class ChangeMemberRole {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly accounts: Accounts,
    private readonly audit: AuditTrail,
    private readonly credentials: Credentials,
    private readonly clock: Clock,
    private readonly cache: CredentialCache = new CredentialCache(),
  ) {}

  private keyDeps() {
    return { credentials: this.credentials, audit: this.audit, clock: this.clock, cache: this.cache, uow: this.uow };
  }

  /** A demotion from admin or owner to developer or viewer settles the member's keys by `policy` (audited in data). */
  async execute(principal: Principal, userId: string, role: Role, ip: string | null, policy: KeyPolicy = { revokeApiKeys: false }): Promise<MemberRecord> {
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
      const demoted = MANAGERS.includes(member.role) && !MANAGERS.includes(role);
      const keys = demoted ? await settleKeysOf(this.keyDeps(), principal, userId, policy, ip) : {};
      await this.audit.record({
        orgId: principal.orgId,
        actorType: 'user',
        actorId: principal.userId,
        action: 'member.role_change',
        targetId: userId,
        ipAddress: ip,
        data: { email: member.email, from: member.role, to: role, ...keys },
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
    private readonly credentials: Credentials,
    private readonly clock: Clock,
    private readonly cache: CredentialCache = new CredentialCache(),
  ) {}

  private keyDeps() {
    return { credentials: this.credentials, audit: this.audit, clock: this.clock, cache: this.cache, uow: this.uow };
  }

  /**
   * The member's sessions lose the organization at once: membership is checked at every request.
   * The keys they created keep working unless `policy` revokes them (accounts.md: CI must not
   * break when a person leaves); the entry lists them either way.
   */
  async execute(principal: Principal, userId: string, ip: string | null, policy: KeyPolicy = { revokeApiKeys: false }): Promise<void> {
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
      const keys = await settleKeysOf(this.keyDeps(), principal, userId, policy, ip);
      await this.audit.record({
        orgId: principal.orgId,
        actorType: 'user',
        actorId: principal.userId,
        action: 'member.remove',
        targetId: userId,
        ipAddress: ip,
        data: { email: member.email, role: member.role, ...keys },
      });
    });
  }
}

export type { MemberRecord };
