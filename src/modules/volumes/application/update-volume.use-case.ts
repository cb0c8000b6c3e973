import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { forbidden, invalidState, notFound } from '../../../shared/kernel/errors/domain-error';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { ADMIN_ROLES, Principal } from '../../auth/domain/principal';
import { Volume } from '../domain/volume';
import { checkVolumeName } from '../domain/volume-attributes';
import { Labels, checkLabels, sameLabels } from '../../prepaid/domain/labels';
import { autoRenewChange, checkAutoRenew } from '../../prepaid/domain/auto-renew';
import { RENEWAL_TERMS } from '../../prepaid/domain/term';
import { Settings } from '../../../shared/config/settings';
import { auditActor } from '../../audit/application/audit-actor';
import { VolumeChanges, VolumeRepository } from './volumes.port';

/** Turning protection off takes an admin or owner session, or an API key (which has vm:write to get here). */
const mayTurnProtectionOff = (principal: Principal): boolean => principal.kind !== 'session' || ADMIN_ROLES.includes(principal.role);

const protectionOffForbidden = (principal: Principal) =>
  forbidden(`Role ${principal.role} may not turn delete_protection off; it needs one of: ${ADMIN_ROLES.join(', ')}`);

/** The members of PATCH /v1/volumes/{id}, already checked (undefined: not sent). */
export interface UpdateVolumeInput {
  volumeId: string;
  name?: string;
  note?: string | null;
  /** Checked here (count, keys, values): 400 naming `labels.<key>`. */
  labels?: Record<string, unknown>;
  deleteProtection?: boolean;
  /** `{enabled, term_months?}` as sent: checked here (400 naming auto_renew.<member>). */
  autoRenew?: unknown;
}

/**
 * PATCH /v1/volumes/{id} (lifecycle.md "Attach, detach, delete, edit"): synchronous, in one
 * transaction: lock the volume, refuse a deleted one (409 invalid_state), refuse a developer
 * session turning delete_protection off (403; refuseProtectionOff says so first, before the
 * body's 400s), write the members that change (a taken name is
 * refused by the database's unique index: 409 conflict) and the audit row volume.update with
 * each changed member, old and new. Nothing changes: no write and no audit row.
 */
@Injectable()
export class UpdateVolume {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly volumes: VolumeRepository,
    private readonly audit: AuditTrail,
    private readonly settings: Settings,
  ) {}

  /**
   * lifecycle.md's check order puts 403 before 400: called with the body as sent, before it is
   * validated. A developer session whose body turns delete_protection off (`false`, whatever else
   * it holds) on a volume of the organization that has it on is 403 at once. Anything else passes
   * (an unknown volume, one not protected: the body's 400s, then 404, come next), and execute()
   * judges protection again under the volume's lock.
   */
  async refuseProtectionOff(principal: Principal, volumeId: string, body: unknown): Promise<void> {
    const turningOff = typeof body === 'object' && body !== null && (body as { delete_protection?: unknown }).delete_protection === false;
    if (!turningOff || mayTurnProtectionOff(principal)) return;
    const volume = await this.volumes.findInOrg(principal.orgId, volumeId);
    if (volume?.deleteProtection && !volume.deletedAt) throw protectionOffForbidden(principal);
  }

  async execute(principal: Principal, input: UpdateVolumeInput, ip: string | null): Promise<Volume> {
    // Body errors (400) come before the volume is looked up (404, 409).
    const name = input.name === undefined ? undefined : checkVolumeName(input.name);
    const labels: Labels | undefined = input.labels === undefined ? undefined : checkLabels(input.labels);
    const autoRenew = input.autoRenew === undefined ? undefined : checkAutoRenew(input.autoRenew, RENEWAL_TERMS);
    return this.uow.run(async () => {
      const volume = await this.volumes.lockInOrg(principal.orgId, input.volumeId);
      if (!volume) throw notFound(`Volume ${input.volumeId} not found`);
      if (volume.deletedAt || volume.status === 'deleted') throw invalidState(`Volume ${volume.id} is deleted and cannot be changed`);

      const changes: VolumeChanges = {};
      const diff: Record<string, { old: unknown; new: unknown }> = {};
      if (name !== undefined && name !== volume.name) {
        changes.name = name;
        diff.name = { old: volume.name, new: name };
      }
      if (input.note !== undefined && input.note !== volume.note) {
        changes.note = input.note;
        diff.note = { old: volume.note, new: input.note };
      }
      if (labels !== undefined && !sameLabels(labels, volume.labels)) {
        changes.labels = labels;
        diff.labels = { old: volume.labels, new: labels };
      }
      // A delete under way goes on whatever the flag says: changing it then would claim otherwise.
      if (input.deleteProtection !== undefined && volume.status === 'deleting') {
        throw invalidState(`Volume ${volume.id} is being deleted; its delete_protection cannot change`);
      }
      if (input.deleteProtection !== undefined && input.deleteProtection !== volume.deleteProtection) {
        if (!input.deleteProtection && !mayTurnProtectionOff(principal)) throw protectionOffForbidden(principal);
        changes.deleteProtection = input.deleteProtection;
        diff.delete_protection = { old: volume.deleteProtection, new: input.deleteProtection };
      }
      if (autoRenew !== undefined) {
        const change = autoRenewChange(volume.autoRenew, autoRenew, this.settings.autoRenewLeadS);
        if (change) {
          changes.autoRenew = change.setting;
          diff.auto_renew = change.diff;
        }
      }
      if (Object.keys(diff).length === 0) return volume;

      await this.volumes.update(volume.id, changes);
      await this.audit.record({
        orgId: principal.orgId,
        ...auditActor(principal),
        action: 'volume.update',
        targetId: volume.id,
        ipAddress: ip,
        data: { changes: diff },
      });
      return (await this.volumes.findInOrg(principal.orgId, volume.id))!;
    });
  }
}
