import { Money } from '../../../shared/kernel/money/money';
import { AuditEntry } from '../../audit/application/audit-trail.port';
import { Operation } from '../domain/operation';

/** An operation to accept: stored pending, its price reserved in its organization's wallet, audited. */
export interface OperationToAccept {
  operation: Operation;
  /** The price to reserve (a hold); none (or zero) when the operation is free. */
  hold?: Money;
  audit: AuditEntry;
}

/**
 * What accept() did: everything; or nothing, because the operation's volume has an unfinished
 * operation (`busy`) or the wallet cannot cover the hold (`insufficient`, with what it has).
 */
export type AcceptanceOutcome = { kind: 'accepted' } | { kind: 'busy'; operationId: string } | { kind: 'insufficient'; available: Money };

/**
 * Accepts an operation in the active transaction, all or nothing: unless its volume already has
 * an unfinished operation, stores it (OperationRepository.create: the workers are told once the
 * transaction commits), takes the hold (WalletLedger.hold) and appends the audit entry. When it
 * refuses it has written nothing, so the caller's transaction stays usable without a savepoint.
 * Call it with the volume's row locked (the unfinished-operation check is then exact; the
 * database's one-unfinished-operation-per-volume index stays the last word, an error).
 *
 * The database adapter does it in one statement; the unit tests' adapter (testing/) composes the
 * other ports' in-memory adapters.
 */
export abstract class OperationAcceptance {
  abstract accept(request: OperationToAccept): Promise<AcceptanceOutcome>;
  /**
   * Several operations at once, in the active transaction (the term sweep's automatic renewals),
   * an outcome for each in the order given. For each organization and currency the holds are
   * taken in the order given while the balance covers them: the first one it cannot cover and
   * every later one of that organization and currency are refused (`insufficient`, with what the
   * balance had left at its turn), so one batch never accepts a later renewal in place of an
   * earlier one. An operation whose volume or server has an unfinished operation is `busy`.
   * Call it with every resource's row locked, as accept().
   */
  abstract acceptMany(requests: readonly OperationToAccept[]): Promise<AcceptanceOutcome[]>;
}
