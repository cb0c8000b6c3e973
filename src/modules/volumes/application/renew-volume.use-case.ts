import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { notFound } from '../../../shared/kernel/errors/domain-error';
import { newId } from '../../../shared/kernel/ids/ids';
import { Currency, Money } from '../../../shared/kernel/money/money';
import { Principal } from '../../auth/domain/principal';
import { OperationAcceptance, OperationToAccept } from '../../operations/application/operation-acceptance.port';
import { Operation } from '../../operations/domain/operation';
import { insufficientBalance } from '../../wallet/domain/wallet-errors';
import { quoteRenewal } from '../domain/renewal';
import { Volume, assertDiskPresent } from '../domain/volume';
import { TermMonths } from '../../prepaid/domain/term';
import { operationInTheWay } from '../domain/volume-actions';
import { SystemActor, auditActor } from '../../audit/application/audit-actor';
import { renewalParams } from '../../prepaid/application/renewal-params';
import { VolumeRepository } from './volumes.port';

export interface RenewVolumeInput {
  volumeId: string;
  termMonths: TermMonths;
  /** Defaults to the volume's billing currency. */
  currency?: Currency;
  /** An automatic renewal (terms.md): audited with `data.auto: true`. */
  auto?: boolean;
}

/**
 * POST /v1/volumes/{id}/renew: in one transaction, lock the volume, check it may be renewed,
 * and accept the volume.renew operation (pending, step renewing running) with its price reserved
 * in the wallet and its audit row (OperationAcceptance: one statement on the database, which
 * writes nothing when it refuses). The worker does the renewal itself (RenewalExecutor).
 * Errors in the order of decisions.md: 404, 409 invalid_state, then 402.
 *
 * Every effect of it is in its transaction (the workers are told after the commit), its writes
 * are its last statement and it writes nothing before a storable error: the controller runs it
 * under an Idempotency-Key optimistically (IdempotentOptions.optimistic).
 */
@Injectable()
export class RenewVolume {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly volumes: VolumeRepository,
    private readonly acceptance: OperationAcceptance,
    private readonly clock: Clock,
  ) {}

  execute(principal: Principal | SystemActor, input: RenewVolumeInput, ip: string | null): Promise<{ volume: Volume; operation: Operation }> {
    return this.uow.run(async () => {
      // The row lock serialises renewals (and every other operation) of one volume; the unique
      // index on unfinished operations is the last word should anything slip past it.
      const volume = await this.volumes.lockInOrg(principal.orgId, input.volumeId);
      if (!volume) throw notFound(`Volume ${input.volumeId} not found`);
      const request = this.toAccept(principal, volume, input, ip);
      const outcome = await this.acceptance.accept(request);
      if (outcome.kind === 'busy') throw operationInTheWay(volume.id, outcome.operationId);
      if (outcome.kind === 'insufficient') throw insufficientBalance(request.hold, outcome.available);
      return { volume, operation: request.operation };
    });
  }

  /**
   * The renewal of `volume` (its row locked by the caller) as an operation to accept: its price
   * quoted (the frozen price, the billing currency unless another is asked for), the operation
   * and its audit entry. No I/O: the term sweep accepts many at once (OperationAcceptance.acceptMany).
   */
  toAccept(principal: Principal | SystemActor, volume: Volume, input: RenewVolumeInput, ip: string | null): OperationToAccept & { hold: Money } {
    assertDiskPresent(volume, 'renewed');
    const quote = quoteRenewal(volume, input.termMonths, input.currency);
    const operation = Operation.create({
      id: newId('op'),
      orgId: principal.orgId,
      type: 'volume.renew',
      vmId: volume.server?.id ?? null,
      volumeId: volume.id,
      steps: [{ name: 'renewing', status: 'running' }],
      params: renewalParams.write(quote),
      createdAt: this.clock.now(),
    });
    return {
      operation,
      hold: quote.amount,
      audit: {
        orgId: principal.orgId,
        ...auditActor(principal),
        action: 'volume.renew',
        targetId: volume.id,
        ipAddress: ip,
        data: {
          operation_id: operation.id,
          term_months: quote.termMonths,
          currency: quote.amount.currency,
          amount: quote.amount.format(),
          ...(input.auto ? { auto: true } : {}),
        },
      },
    };
  }
}
