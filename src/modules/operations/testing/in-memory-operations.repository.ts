import { invalidState } from '../../../shared/kernel/errors/domain-error';
import { Page, toPage } from '../../../shared/kernel/pagination/cursor';
import { OperationListQuery, OperationRepository } from '../application/operations.port';
import { Operation, OperationState } from '../domain/operation';
import { EventOutbox } from '../../webhooks/application/event-outbox.port';
import { EventRecord } from '../../webhooks/domain/events';

const cursorText = (d: Date): string => d.toISOString().replace('Z', '000Z');
const unfinished = (s: OperationState): boolean => s.status === 'pending' || s.status === 'running';

/** Operations in memory, with the database's rule of one unfinished operation per volume. Locks are no-ops. */
export class InMemoryOperationRepository extends OperationRepository {
  readonly rows = new Map<string, OperationState>();

  constructor(private readonly outbox?: EventOutbox) {
    super();
  }

  async create(operation: Operation): Promise<void> {
    const o = operation.snapshot();
    if (this.rows.has(o.id)) throw new Error(`Operation ${o.id} exists already`);
    if (o.volumeId && unfinished(o) && [...this.rows.values()].some((r) => r.volumeId === o.volumeId && unfinished(r))) {
      throw invalidState(`Volume ${o.volumeId} already has an operation pending or running; wait for it to end`);
    }
    this.rows.set(o.id, o);
  }

  async createMany(operations: readonly Operation[]): Promise<void> {
    for (const operation of operations) await this.create(operation);
  }

  async findInOrg(orgId: string, id: string): Promise<Operation | undefined> {
    const r = this.rows.get(id);
    return r && r.orgId === orgId ? Operation.restore(r) : undefined;
  }

  async list(orgId: string, query: OperationListQuery): Promise<Page<Operation>> {
    const key = (r: OperationState): string => `${cursorText(r.createdAt)}|${r.id}`;
    const after = query.after && `${query.after.createdAt}|${query.after.id}`;
    const matching = [...this.rows.values()]
      .filter((r) => r.orgId === orgId)
      .filter((r) => query.volumeId === undefined || r.volumeId === query.volumeId)
      .filter((r) => (query.vmId === undefined || r.vmId === query.vmId) && (query.deploymentId === undefined || r.deploymentId === query.deploymentId))
      .filter((r) => query.status === undefined || r.status === query.status)
      .sort((a, b) => (key(a) < key(b) ? 1 : key(a) > key(b) ? -1 : 0))
      .filter((r) => after === undefined || key(r) < after);
    return toPage(matching, query.limit, (r) => ({ createdAt: cursorText(r.createdAt), id: r.id }), (r) => Operation.restore(r));
  }

  async hasUnfinishedForVolume(volumeId: string): Promise<boolean> {
    return [...this.rows.values()].some((r) => r.volumeId === volumeId && unfinished(r));
  }

  async unfinishedForVolume(volumeId: string): Promise<string | undefined> {
    return [...this.rows.values()].find((r) => r.volumeId === volumeId && unfinished(r))?.id;
  }

  async claim(workerId: string, now: Date, leaseUntil: Date, limit: number): Promise<string[]> {
    const claimable = [...this.rows.values()]
      .filter((r) => r.status === 'pending' || (r.status === 'running' && (!r.lockedUntil || r.lockedUntil.getTime() < now.getTime())))
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1))
      .slice(0, limit)
      .map((r) => Operation.restore(r));
    for (const op of claimable) {
      op.claim(workerId, leaseUntil, now);
      await this.save(op);
    }
    return claimable.map((op) => op.id);
  }

  async lock(id: string): Promise<Operation | undefined> {
    const r = this.rows.get(id);
    return r && Operation.restore(r);
  }

  async extendLeases(workerId: string, ids: readonly string[], leaseUntil: Date): Promise<number> {
    let n = 0;
    for (const id of ids) {
      const r = this.rows.get(id);
      if (r && r.status === 'running' && r.lockedBy === workerId) {
        r.lockedUntil = new Date(leaseUntil.getTime());
        n++;
      }
    }
    return n;
  }

  async lockMany(ids: readonly string[]): Promise<Operation[]> {
    return [...ids].sort().flatMap((id) => {
      const r = this.rows.get(id);
      return r ? [Operation.restore(r)] : [];
    });
  }

  /** The events go to `outbox` (none: dropped, as NoEventOutbox does). */
  async saveMany(operations: readonly Operation[], events: readonly EventRecord[] = []): Promise<void> {
    for (const op of operations) await this.save(op);
    if (events.length > 0) await this.outbox?.recordMany(events);
  }

  async save(operation: Operation): Promise<void> {
    const o = operation.snapshot();
    if (!this.rows.has(o.id)) throw new Error(`Operation ${o.id} does not exist`);
    this.rows.set(o.id, o);
  }
}
