import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { forbidden, invalidRequest, invalidState, notFound } from '../../../shared/kernel/errors/domain-error';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { ADMIN_ROLES, Principal } from '../../auth/domain/principal';
import { auditActor } from '../../audit/application/audit-actor';
import { Labels, checkLabels, sameLabels } from '../../prepaid/domain/labels';
import { autoRenewChange, checkAutoRenew } from '../../prepaid/domain/auto-renew';
import { RENEWAL_TERMS } from '../../prepaid/domain/term';
import { Settings } from '../../../shared/config/settings';
import { SERVER_NAME_PATTERN, SERVER_NAME_RULE, Server, nameTaken } from '../domain/server';
import { ServerChanges, ServerReads, ServerWrites } from './servers.port';

/** Turning protection off takes an admin or owner session, or an API key (which has vm:write to get here). */
const mayTurnProtectionOff = (principal: Principal): boolean => principal.kind !== 'session' || ADMIN_ROLES.includes(principal.role);

const protectionOffForbidden = (principal: Principal) =>
  forbidden(`Role ${principal.role} may not turn delete_protection off; it needs one of: ${ADMIN_ROLES.join(', ')}`);

export function checkServerName(value: unknown, field = 'name'): string {
  if (typeof value !== 'string' || !SERVER_NAME_PATTERN.test(value)) throw invalidRequest(`${field} must be ${SERVER_NAME_RULE}`, { field });
  return value;
}

/** The members of PATCH /v1/servers/{id}, type-checked (undefined: not sent). */
export interface UpdateServerInput {
  serverId: string;
  name?: string;
  /** Checked here (count, keys, values): 400 naming `labels.<key>`. */
  labels?: Record<string, unknown>;
  deleteProtection?: boolean;
  /** `{enabled, term_months?}` as sent: checked here (400 naming auto_renew.<member>). */
  autoRenew?: unknown;
}

/**
 * PATCH /v1/servers/{id} (servers.md: the volume PATCH rules): synchronous, in one transaction:
 * lock the server, refuse a deleted one (409 invalid_state), refuse a developer session turning
 * delete_protection off (403, before the body's 400s through refuseProtectionOff), refuse a name
 * taken by another live server of the organization (409 conflict, details.existing_id; the
 * unique index decides between concurrent requests), write what changes and the audit row
 * server.update with each changed member, old and new. Nothing changes: no write, no audit row.
 */
@Injectable()
export class UpdateServer {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly reads: ServerReads,
    private readonly writes: ServerWrites,
    private readonly audit: AuditTrail,
    private readonly settings: Settings,
  ) {}

  async refuseProtectionOff(principal: Principal, serverId: string, body: unknown): Promise<void> {
    const turningOff = typeof body === 'object' && body !== null && (body as { delete_protection?: unknown }).delete_protection === false;
    if (!turningOff || mayTurnProtectionOff(principal)) return;
    const server = await this.reads.findInOrg(principal.orgId, serverId);
    if (server?.deleteProtection && !server.deletedAt) throw protectionOffForbidden(principal);
  }

  async execute(principal: Principal, input: UpdateServerInput, ip: string | null): Promise<Server> {
    const name = input.name === undefined ? undefined : checkServerName(input.name);
    const labels: Labels | undefined = input.labels === undefined ? undefined : checkLabels(input.labels);
    const autoRenew = input.autoRenew === undefined ? undefined : checkAutoRenew(input.autoRenew, RENEWAL_TERMS);
    return this.uow.run(async () => {
      const server = await this.writes.lockInOrg(principal.orgId, input.serverId);
      if (!server) throw notFound(`Server ${input.serverId} not found`);
      if (server.deletedAt || server.status === 'deleted') throw invalidState(`Server ${server.id} is deleted and cannot be changed`);

      const changes: ServerChanges = {};
      const diff: Record<string, { old: unknown; new: unknown }> = {};
      if (name !== undefined && name !== server.name) {
        const holder = await this.writes.liveIdByName(principal.orgId, name);
        if (holder !== undefined) throw nameTaken(name, holder);
        changes.name = name;
        diff.name = { old: server.name, new: name };
      }
      if (labels !== undefined && !sameLabels(labels, server.labels)) {
        changes.labels = labels;
        diff.labels = { old: server.labels, new: labels };
      }
      if (input.deleteProtection !== undefined && input.deleteProtection !== server.deleteProtection) {
        if (!input.deleteProtection && !mayTurnProtectionOff(principal)) throw protectionOffForbidden(principal);
        changes.deleteProtection = input.deleteProtection;
        diff.delete_protection = { old: server.deleteProtection, new: input.deleteProtection };
      }
      if (autoRenew !== undefined) {
        const change = autoRenewChange(server.autoRenew, autoRenew, this.settings.autoRenewLeadS);
        // terms.md: a seeded server with no term never expires and cannot auto-renew.
        if (change?.setting.enabled && (!server.expiresAt || !server.price || !server.billing)) {
          throw invalidState(`Server ${server.id} was not bought here (a seeded server with no term) and cannot renew automatically`);
        }
        if (change) {
          changes.autoRenew = change.setting;
          diff.auto_renew = change.diff;
        }
      }
      if (Object.keys(diff).length === 0) return server;

      await this.writes.update(principal.orgId, server.id, changes);
      await this.audit.record({
        orgId: principal.orgId,
        ...auditActor(principal),
        action: 'server.update',
        targetId: server.id,
        ipAddress: ip,
        data: { changes: diff },
      });
      return (await this.reads.findInOrg(principal.orgId, server.id))!;
    });
  }
}
