import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Money } from '../../../shared/kernel/money/money';
import { AuditEntry, AuditTrail } from '../../audit/application/audit-trail.port';
import { WalletLedger } from '../../wallet/application/wallet.port';
import { Operation } from '../domain/operation';
import { OperationRepository } from './operations.port';

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
 * The database adapter does it in one statement; PortOperationAcceptance composes the ports.
 */
export abstract class OperationAcceptance {
  abstract accept(request: OperationToAccept): Promise<AcceptanceOutcome>;
}

class HoldRefused extends Error {
  constructor(readonly available: Money) {
    super('hold refused');
  }
}

/** OperationAcceptance through the ports, statement by statement (the refused hold undone by a savepoint). */
export class PortOperationAcceptance extends OperationAcceptance {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly operations: OperationRepository,
    private readonly wallet: WalletLedger,
    private readonly audit: AuditTrail,
  ) {
    super();
  }

  async accept({ operation, hold, audit }: OperationToAccept): Promise<AcceptanceOutcome> {
    const busy = operation.volumeId ? await this.operations.unfinishedForVolume(operation.volumeId) : undefined;
    if (busy) return { kind: 'busy', operationId: busy };
    try {
      await this.uow.savepoint(async () => {
        await this.operations.create(operation);
        if (hold && hold.minor > 0n) {
          const held = await this.wallet.hold(operation.orgId, hold, operation.id);
          if (!held.held) throw new HoldRefused(held.available);
        }
        await this.audit.record(audit);
      });
    } catch (err) {
      if (err instanceof HoldRefused) return { kind: 'insufficient', available: err.available };
      throw err;
    }
    return { kind: 'accepted' };
  }
}
