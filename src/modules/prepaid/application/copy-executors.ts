import { invalidState } from '../../../shared/kernel/errors/domain-error';
import { Clock } from '../../../shared/kernel/clock/clock';
import { Money } from '../../../shared/kernel/money/money';
import { JsonObject, Operation } from '../../operations/domain/operation';
import { EventOutbox } from '../../webhooks/application/event-outbox.port';
import { EventRecord } from '../../webhooks/domain/events';
import { RenewedTerms, TermMonths, renewedTerms } from '../domain/term';

/**
 * What the executors of a prepaid copy's operations (a snapshot's, a server image's, a reserved
 * address's) share: the copy the operation names, locked, its renewal, and the event announcing
 * its end.
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

/**
 * The `renewing` commit of a renewal of the copy `c` (locked; the caller has refused what may not
 * be renewed): the term and charge `op` carries (409 invalid_state when it names none) saved with
 * `expires_at` = max(expires_at, now) + term; the operation's result names the copy under `idField`.
 */
export async function commitRenewal(
  rows: { saveRenewal(id: string, terms: RenewedTerms): Promise<void> },
  clock: Clock,
  op: Operation,
  c: { id: string; expiresAt: Date },
  quote: { termMonths: TermMonths | null; amount: Money | null },
  idField: string,
): Promise<JsonObject> {
  if (!quote.termMonths || !quote.amount) throw invalidState(`Operation ${op.id} names no term`);
  const terms = renewedTerms(c.expiresAt, { termMonths: quote.termMonths, amount: quote.amount }, clock.now());
  await rows.saveRenewal(c.id, terms);
  return {
    [idField]: c.id,
    term_months: terms.termMonths,
    expires_at: terms.expiresAt.toISOString(),
    charged: { currency: terms.billing.currency, amount: terms.billing.format() },
  };
}
