import { invalidState } from '../../../shared/kernel/errors/domain-error';
import { Operation } from '../../operations/domain/operation';
import { EventOutbox } from '../../webhooks/application/event-outbox.port';
import { EventRecord } from '../../webhooks/domain/events';

/**
 * What the executors of a prepaid copy's operations (a snapshot's, a server image's, a reserved
 * address's) share: the copy the operation names, locked, and the event announcing its end.
 */

/** The copy `id` that `op` names, locked: 409 invalid_state `<noun> <id> no longer exists` when it is gone or another organization's. */
export async function lockOperationCopy<C extends { orgId: string }>(
  rows: { lock(id: string): Promise<C | undefined> }, op: Operation, id: string, noun: string,
): Promise<C> {
  const c = await rows.lock(id);
  if (!c || c.orgId !== op.orgId) throw invalidState(`${noun} ${id} no longer exists`);
  return c;
}

/** Records the event `type` (at `now`) of the copy `c` as its row is now, shown by `present`; nothing when the row is gone. */
export async function announceCopy<C extends { id: string; orgId: string }>(
  rows: { findInOrg(orgId: string, id: string): Promise<C | undefined> },
  outbox: EventOutbox,
  c: C,
  event: { type: EventRecord['type']; now: Date; present: (c: C) => EventRecord['data'] },
): Promise<void> {
  const after = await rows.findInOrg(c.orgId, c.id);
  if (after) await outbox.record({ orgId: c.orgId, type: event.type, createdAt: event.now, data: event.present(after) });
}
