import { Injectable } from '@nestjs/common';
import { Settings } from '../../../shared/config/settings';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { newId } from '../../../shared/kernel/ids/ids';
import { AuditEntry, AuditTrail } from '../../audit/application/audit-trail.port';
import { endedEvent } from '../../operations/application/advance-operations.use-case';
import { OperationRepository } from '../../operations/application/operations.port';
import { Operation } from '../../operations/domain/operation';
import { ServerReads } from '../../servers/application/servers.port';
import { DeleteServer } from '../../servers/application/delete-server.use-case';
import { presentServer } from '../../servers/domain/server-json';
import { VolumeRepository } from '../../volumes/application/volumes.port';
import { deleteParams } from '../../volumes/application/volume-action-params';
import { presentVolume } from '../../volumes/domain/volume-json';
import { EventOutbox } from '../../webhooks/application/event-outbox.port';
import { EventRecord, EventType } from '../../webhooks/domain/events';
import { after, suspendParams, suspendVolumeResult } from '../domain/suspension';
import { SweepStep, inRounds } from './sweep-rounds';
import { DueResource, TermStore } from './term-store.port';

/**
 * The claimed rows in organization order: every writer of a batch then takes the organizations'
 * audit and outbox heads in one order, so two processes' batches never wait on each other in a cycle.
 */
export const byOrg = <T extends { orgId: string; id: string }>(rows: T[]): T[] =>
  rows.sort((a, b) => (a.orgId < b.orgId ? -1 : a.orgId > b.orgId ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

/** Resources one transaction of a sweep claims at a time. */
export const TERM_SWEEP_BATCH = 100;
/** Resources a set-based suspension or release claims at a time in the worker's sweep (a handful of statements whatever their number). */
export const SUSPEND_BATCH = 500;
/** The `locked_by` of the operations the sweep ends itself (a detached volume's volume.suspend): the worker that finished them. */
export const TERM_SWEEP_WORKER = 'term-sweep';

/**
 * terms.md "Expiry: suspension": every live, settled server and volume whose `expires_at` has
 * passed becomes `suspended` with its operation (vm.suspend: powering_off; volume.suspend:
 * unmounting, detaching when attached, else suspending), by actor system, audited and announced.
 * One transaction per batch: the rows claimed FOR UPDATE SKIP LOCKED (several processes share the
 * work, each row once), each re-checked under its lock (a renewal that committed first moved its
 * `expires_at`: not due any more); in rounds with the other transitions while batches come back
 * full (inRounds).
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
  execute(stopping: () => boolean = () => false, batch = TERM_SWEEP_BATCH): Promise<number> {
    return inRounds([{ batch, steps: this.steps(batch) }], stopping);
  }

  /** Its transitions, one batch each in a transaction (inRounds): releases first, then suspensions. */
  steps(batch = TERM_SWEEP_BATCH): SweepStep[] {
    return [
      () => this.uow.run(() => this.releaseVolumes(batch)),
      () => this.uow.run(() => this.releaseServers(batch)),
      () => this.uow.run(() => this.suspendVolumes(batch)),
      () => this.uow.run(() => this.suspendServers(batch)),
    ];
  }

  /**
   * terms.md "Release": a volume still suspended at `release_at` is deleted at the provider
   * through volume.delete by actor system (`deleting` at once, `deleted_reason: "expired"`);
   * its volume.deleted event is sent when the disk is gone. The batch's operations, rows and
   * audit entries are written by one statement each.
   */
  private async releaseVolumes(limit: number): Promise<number> {
    const now = this.clock.now();
    const due = byOrg(await this.store.claimReleasableVolumes(now, limit));
    const operations = due.map((v) =>
      Operation.create({
        id: newId('op'),
        orgId: v.orgId,
        type: 'volume.delete',
        vmId: v.serverId,
        volumeId: v.id,
        steps: [...(v.serverId ? ['unmounting', 'detaching'] : []), 'deleting'].map((name) => ({ name, status: 'pending' as const })),
        params: deleteParams.write({ detach: v.serverId !== null }),
        createdAt: now,
      }),
    );
    await this.operations.createMany(operations);
    await this.store.markVolumesReleasing(due.map((v) => v.id));
    await this.audit.recordMany(
      due.map((v, i) => ({
        orgId: v.orgId, actorType: 'system', actorId: null, action: 'volume.delete', targetId: v.id, ipAddress: null,
        data: { operation_id: operations[i].id, reason: 'expired' },
      })),
    );
    return due.length;
  }

  /** terms.md "Release": a server still suspended at `release_at` goes the vm.delete path by actor system (DeleteServer.release). */
  private async releaseServers(limit: number): Promise<number> {
    const due = byOrg(await this.store.claimReleasableServers(this.clock.now(), limit));
    for (const s of due) await this.deleteServer.release(s.orgId, s.id);
    return due.length;
  }

  /**
   * terms.md "Expiry: suspension" of a batch of volumes, set-based: their operations, their rows,
   * their audit entries, one statement each; the `volume.suspended` events of the organizations
   * whose endpoints subscribe to it (asked in one statement), each with the volume as it is now.
   * A detached volume's volume.suspend (one step, `suspending`, no provider call) ends here, in
   * the same transaction as its suspension (written succeeded with its result, its
   * `operation.succeeded` event recorded as the worker would): nothing is left for the worker. An
   * attached volume's (unmounting, detaching) is pending for the worker.
   */
  private async suspendVolumes(limit: number): Promise<number> {
    const now = this.clock.now();
    const releaseAt = after(now, this.settings.volumeRetentionS);
    const due = byOrg(await this.store.claimExpiredVolumes(now, limit));
    const operations = due.map((v) => {
      const op = Operation.create({
        id: newId('op'),
        orgId: v.orgId,
        type: 'volume.suspend',
        vmId: v.serverId,
        volumeId: v.id,
        steps: (v.serverId !== null ? ['unmounting', 'detaching'] : ['suspending']).map((name) => ({ name, status: 'pending' as const })),
        params: suspendParams.write({ suspendedAt: now, releaseAt, previousServerId: v.serverId }),
        createdAt: now,
      });
      if (v.serverId === null) {
        op.claim(TERM_SWEEP_WORKER, now, now);
        op.succeed(suspendVolumeResult(op), now);
      }
      return op;
    });
    await this.operations.createMany(operations);
    await this.store.markVolumesSuspended(due.map((v) => ({ id: v.id, previousServerId: v.serverId })), now, releaseAt);
    await this.audit.recordMany(due.map((v, i) => this.entry(v, 'volume.suspend', operations[i].id, now, releaseAt)));
    await this.announce(due, 'volume.suspended', now, async (v) => {
      const volume = await this.volumes.findInOrg(v.orgId, v.id);
      return volume && presentVolume(volume);
    });
    const ended = operations.filter((op) => op.isFinished()).map(endedEvent);
    const wanted = await this.outbox.wanted(ended);
    await this.outbox.recordMany(wanted.map((i) => ended[i]));
    return due.length;
  }

  /** As suspendVolumes, for servers (vm.suspend: powering_off; `server.suspended`). */
  private async suspendServers(limit: number): Promise<number> {
    const now = this.clock.now();
    const releaseAt = after(now, this.settings.serverRetentionS);
    const due = byOrg(await this.store.claimExpiredServers(now, limit));
    const operations = due.map((s) =>
      Operation.create({
        id: newId('op'),
        orgId: s.orgId,
        type: 'vm.suspend',
        vmId: s.id,
        steps: [{ name: 'powering_off', status: 'pending' }],
        params: suspendParams.write({ suspendedAt: now, releaseAt, powerBefore: s.status === 'running' ? 'running' : 'stopped' }),
        createdAt: now,
      }),
    );
    await this.operations.createMany(operations);
    await this.store.markServersSuspended(due.map((s) => s.id), now, releaseAt);
    await this.audit.recordMany(due.map((s, i) => this.entry(s, 'server.suspend', operations[i].id, now, releaseAt)));
    await this.announce(due, 'server.suspended', now, async (s) => {
      const server = await this.servers.findInOrg(s.orgId, s.id);
      return server && presentServer(server);
    });
    return due.length;
  }

  /** The events of `type` of the resources whose organization has an endpoint subscribed to it, each presented as it is now. */
  private async announce(due: DueResource[], type: EventType, now: Date, present: (r: DueResource) => Promise<EventRecord['data'] | undefined>): Promise<void> {
    const wanted = await this.outbox.wanted(due.map((r) => ({ orgId: r.orgId, type })));
    const events: EventRecord[] = [];
    for (const i of wanted) {
      const data = await present(due[i]);
      if (data) events.push({ orgId: due[i].orgId, type, createdAt: now, data });
    }
    await this.outbox.recordMany(events);
  }

  private entry(r: DueResource, action: string, operationId: string, now: Date, releaseAt: Date): AuditEntry {
    return {
      orgId: r.orgId,
      actorType: 'system',
      actorId: null,
      action,
      targetId: r.id,
      ipAddress: null,
      data: { operation_id: operationId, suspended_at: now.toISOString(), release_at: releaseAt.toISOString() },
    };
  }
}
