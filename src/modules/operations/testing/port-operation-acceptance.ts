import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Money } from '../../../shared/kernel/money/money';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { WalletLedger } from '../../wallet/application/wallet.port';
import { AcceptanceOutcome, OperationAcceptance, OperationToAccept } from '../application/operation-acceptance.port';
import { OperationRepository } from '../application/operations.port';

class HoldRefused extends Error {
  constructor(readonly available: Money) {
    super('hold refused');
  }
}

/** OperationAcceptance through the other ports (unit tests: their in-memory adapters), statement by statement (the refused hold undone by a savepoint). */
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

  /** accept() for each, in order; per organization and currency, the first hold refused refuses every later one (as the database adapter). */
  async acceptMany(requests: readonly OperationToAccept[]): Promise<AcceptanceOutcome[]> {
    const refused = new Map<string, Money>();
    const outcomes: AcceptanceOutcome[] = [];
    for (const request of requests) {
      const pair = request.hold && request.hold.minor > 0n ? `${request.operation.orgId} ${request.hold.currency}` : undefined;
      const before = pair ? refused.get(pair) : undefined;
      if (before) {
        outcomes.push({ kind: 'insufficient', available: before });
        continue;
      }
      const outcome = await this.accept(request);
      if (pair && outcome.kind === 'insufficient') refused.set(pair, outcome.available);
      outcomes.push(outcome);
    }
    return outcomes;
  }
}
