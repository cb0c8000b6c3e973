import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { DomainError, invalidRequest, notFound } from '../../../shared/kernel/errors/domain-error';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { ServerReads } from '../../servers/application/servers.port';
import { Server } from '../../servers/domain/server';
import { VolumeRepository } from '../../volumes/application/volumes.port';
import { Volume } from '../../volumes/domain/volume';
import { after } from '../domain/suspension';
import { TermStore } from './term-store.port';

/** How far after its suspension staff may move a resource's release (admin.md). */
export const MAX_RETENTION_S = 90 * 86_400;

const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})$/;

/** The customer's audit log action of each kind. */
const AUDIT = { server: { action: 'server.retention_extend' }, volume: { action: 'volume.retention_extend' } } as const;

/** The staff member extending: the audit keeps the role and the justification, never who. */
export interface RetentionActor {
  role: string;
  justification: string | null;
}

export type RetentionExtension =
  | { kind: 'server'; orgId: string; before: Date; after: Date; server: Server }
  | { kind: 'volume'; orgId: string; before: Date; after: Date; volume: Volume };

/**
 * POST /admin/v1/servers/{id}/extend-retention and /admin/v1/volumes/{id}/extend-retention
 * `{until, reason}` (operator): moves a suspended resource's `release_at` later, at most 90 days
 * after its `suspended_at` (400 naming `until` otherwise, or when `until` is not later than the
 * current `release_at`); not suspended: 409 invalid_state. Under the resource's row lock, the
 * lock the release sweep claims with (a release that claimed the row first wins: the resource is
 * then no longer suspended). The customer's audit log gets `server.retention_extend` /
 * `volume.retention_extend` by actor staff with the old and new `release_at`, the reason and the
 * justification; the term sweep releases at the new time.
 */
@Injectable()
export class ExtendRetention {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly store: TermStore,
    private readonly servers: ServerReads,
    private readonly volumes: VolumeRepository,
    private readonly audit: AuditTrail,
  ) {}

  async execute(kind: 'server' | 'volume', id: string, input: { until: unknown; reason: unknown }, actor: RetentionActor): Promise<RetentionExtension> {
    const until = typeof input.until === 'string' && ISO_8601.test(input.until) ? new Date(input.until) : undefined;
    if (!until || Number.isNaN(until.getTime())) throw invalidRequest('until must be an ISO 8601 timestamp such as 2026-12-01T00:00:00Z', { field: 'until' });
    const reason = typeof input.reason === 'string' ? input.reason.trim() : '';
    if (reason.length < 1 || reason.length > 500) throw invalidRequest('reason must be 1 to 500 characters', { field: 'reason' });
    const noun = kind === 'server' ? 'Server' : 'Volume';

    return this.uow.run(async () => {
      const state = await this.store.lockSuspension(kind, id);
      if (!state) throw notFound(`${noun} ${id} not found`);
      if (state.status !== 'suspended' || state.suspendedAt === null || state.releaseAt === null) {
        throw new DomainError('invalid_state', `${noun} ${id} is ${state.status}, not suspended: it has no release to move`, { status: state.status });
      }
      if (until.getTime() <= state.releaseAt.getTime()) {
        throw invalidRequest(`until must be later than the current release_at (${state.releaseAt.toISOString()})`, { field: 'until' });
      }
      const latest = after(state.suspendedAt, MAX_RETENTION_S);
      if (until.getTime() > latest.getTime()) {
        throw invalidRequest(`until must be at most 90 days after suspended_at (${state.suspendedAt.toISOString()}): ${latest.toISOString()} at the latest`, { field: 'until' });
      }
      await this.store.setReleaseAt(kind, id, until);
      await this.audit.record({
        orgId: state.orgId,
        actorType: 'staff',
        actorId: actor.role,
        action: AUDIT[kind].action,
        targetId: id,
        ipAddress: null,
        data: { release_at_before: state.releaseAt.toISOString(), release_at: until.toISOString(), reason, justification: actor.justification },
      });
      if (kind === 'server') {
        const server = await this.servers.findInOrg(state.orgId, id);
        if (!server) throw new Error(`server ${id} vanished under its lock`);
        return { kind, orgId: state.orgId, before: state.releaseAt, after: until, server };
      }
      const volume = await this.volumes.findInOrg(state.orgId, id);
      if (!volume) throw new Error(`volume ${id} vanished under its lock`);
      return { kind, orgId: state.orgId, before: state.releaseAt, after: until, volume };
    });
  }
}
