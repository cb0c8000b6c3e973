import { Injectable } from '@nestjs/common';
import { Settings } from '../../../shared/config/settings';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { newId } from '../../../shared/kernel/ids/ids';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { OperationRepository } from '../../operations/application/operations.port';
import { Operation } from '../../operations/domain/operation';
import { ServerReads } from '../../servers/application/servers.port';
import { DeleteServer } from '../../servers/application/delete-server.use-case';
import { presentServer } from '../../servers/domain/server-json';
import { VolumeRepository } from '../../volumes/application/volumes.port';
import { deleteParams } from '../../volumes/application/volume-action-params';
import { presentVolume } from '../../volumes/domain/volume-json';
import { EventOutbox } from '../../webhooks/application/event-outbox.port';
import { after, suspendParams } from '../domain/suspension';
import { DueResource, TermStore } from './term-store.port';

/**
 * The claimed rows in organization order: every writer of a batch then takes the organizations'
 * audit and outbox heads in one order, so two processes' batches never wait on each other in a cycle.
 */
export const byOrg = <T extends { orgId: string; id: string }>(rows: T[]): T[] =>
  rows.sort((a, b) => (a.orgId < b.orgId ? -1 : a.orgId > b.orgId ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

/** Resources one transaction of a sweep claims at a time. */
export const TERM_SWEEP_BATCH = 100;

/**
 * terms.md "Expiry: suspension": every live, settled server and volume whose `expires_at` has
 * passed becomes `suspended` with its operation (vm.suspend: powering_off; volume.suspend:
 * unmounting, detaching when attached, else suspending), by actor system, audited and announced.
 * One transaction per batch: the rows claimed FOR UPDATE SKIP LOCKED (several processes share the
 * work, each row once), each re-checked under its lock (a renewal that committed first moved its
 * `expires_at`: not due any more); loops while a batch comes back full.
 */
@Injectable()
export class ExpireTerms {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly store: TermStore,
    private readonly operations: OperationRepository,
    private readonly volumes: VolumeRepository,
    private readonly servers: ServerReads,
    private readonly deleteServer: DeleteServer,
    private readonly audit: AuditTrail,
    private readonly outbox: EventOutbox,
    private readonly settings: Settings,
    private readonly clock: Clock,
  ) {}

  /** One sweep: how many resources it suspended or released. */
  async execute(stopping: () => boolean = () => false, batch = TERM_SWEEP_BATCH): Promise<number> {
    const transitions: ((limit: number) => Promise<number>)[] = [
      (n) => this.releaseVolumes(n),
      (n) => this.releaseServers(n),
      (n) => this.suspendVolumes(n),
      (n) => this.suspendServers(n),
    ];
    let done = 0;
    for (const transition of transitions) {
      while (!stopping()) {
        const n = await this.uow.run(() => transition(batch));
        done += n;
        if (n < batch) break;
      }
    }
    return done;
  }

  /**
   * terms.md "Release": a volume still suspended at `release_at` is deleted at the provider
   * through volume.delete by actor system (`deleting` at once, `deleted_reason: "expired"`);
   * its volume.deleted event is sent when the disk is gone.
   */
  private async releaseVolumes(limit: number): Promise<number> {
    const now = this.clock.now();
    const due = byOrg(await this.store.claimReleasableVolumes(now, limit));
    for (const v of due) {
      const operation = Operation.create({
        id: newId('op'),
        orgId: v.orgId,
        type: 'volume.delete',
        vmId: v.serverId,
        volumeId: v.id,
        steps: [...(v.serverId ? ['unmounting', 'detaching'] : []), 'deleting'].map((name) => ({ name, status: 'pending' as const })),
        params: deleteParams.write({ detach: v.serverId !== null }),
        createdAt: now,
      });
      await this.operations.create(operation);
      await this.store.markVolumeReleasing(v.id);
      await this.audit.record({
        orgId: v.orgId, actorType: 'system', actorId: null, action: 'volume.delete', targetId: v.id, ipAddress: null,
        data: { operation_id: operation.id, reason: 'expired' },
      });
    }
    return due.length;
  }

  /** terms.md "Release": a server still suspended at `release_at` goes the vm.delete path by actor system (DeleteServer.release). */
  private async releaseServers(limit: number): Promise<number> {
    const due = byOrg(await this.store.claimReleasableServers(this.clock.now(), limit));
    for (const s of due) await this.deleteServer.release(s.orgId, s.id);
    return due.length;
  }

  private async suspendVolumes(limit: number): Promise<number> {
    const now = this.clock.now();
    const due = byOrg(await this.store.claimExpiredVolumes(now, limit));
    for (const v of due) {
      const releaseAt = after(now, this.settings.volumeRetentionS);
      const attached = v.serverId !== null;
      const operation = Operation.create({
        id: newId('op'),
        orgId: v.orgId,
        type: 'volume.suspend',
        vmId: v.serverId,
        volumeId: v.id,
        steps: (attached ? ['unmounting', 'detaching'] : ['suspending']).map((name) => ({ name, status: 'pending' as const })),
        params: suspendParams.write({ suspendedAt: now, releaseAt, previousServerId: v.serverId }),
        createdAt: now,
      });
      await this.operations.create(operation);
      await this.store.markVolumeSuspended(v.id, now, releaseAt, v.serverId);
      await this.record(v, 'volume.suspend', operation.id, now, releaseAt);
      const volume = await this.volumes.findInOrg(v.orgId, v.id);
      if (volume) await this.outbox.record({ orgId: v.orgId, type: 'volume.suspended', createdAt: now, data: presentVolume(volume) });
    }
    return due.length;
  }

  private async suspendServers(limit: number): Promise<number> {
    const now = this.clock.now();
    const due = byOrg(await this.store.claimExpiredServers(now, limit));
    for (const s of due) {
      const releaseAt = after(now, this.settings.serverRetentionS);
      const operation = Operation.create({
        id: newId('op'),
        orgId: s.orgId,
        type: 'vm.suspend',
        vmId: s.id,
        steps: [{ name: 'powering_off', status: 'pending' }],
        params: suspendParams.write({ suspendedAt: now, releaseAt, powerBefore: s.status === 'running' ? 'running' : 'stopped' }),
        createdAt: now,
      });
      await this.operations.create(operation);
      await this.store.markServerSuspended(s.id, now, releaseAt);
      await this.record(s, 'server.suspend', operation.id, now, releaseAt);
      const server = await this.servers.findInOrg(s.orgId, s.id);
      if (server) await this.outbox.record({ orgId: s.orgId, type: 'server.suspended', createdAt: now, data: presentServer(server) });
    }
    return due.length;
  }

  private record(r: DueResource, action: string, operationId: string, now: Date, releaseAt: Date): Promise<void> {
    return this.audit.record({
      orgId: r.orgId,
      actorType: 'system',
      actorId: null,
      action,
      targetId: r.id,
      ipAddress: null,
      data: { operation_id: operationId, suspended_at: now.toISOString(), release_at: releaseAt.toISOString() },
    });
  }
}
