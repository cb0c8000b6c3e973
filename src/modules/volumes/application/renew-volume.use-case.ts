import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { notFound } from '../../../shared/kernel/errors/domain-error';
import { newId } from '../../../shared/kernel/ids/ids';
import { Currency } from '../../../shared/kernel/money/money';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { Principal } from '../../auth/domain/principal';
import { OperationRepository } from '../../operations/application/operations.port';
import { Operation } from '../../operations/domain/operation';
import { WalletLedger } from '../../wallet/application/wallet.port';
import { insufficientBalance } from '../../wallet/domain/wallet-errors';
import { quoteRenewal } from '../domain/renewal';
import { TermMonths, Volume } from '../domain/volume';
import { operationInTheWay } from '../domain/volume-actions';
import { auditActor } from './audit-actor';
import { renewalParams } from './renewal-params';
import { VolumeRepository } from './volumes.port';

export interface RenewVolumeInput {
  volumeId: string;
  termMonths: TermMonths;
  /** Defaults to the volume's billing currency. */
  currency?: Currency;
}

/**
 * POST /v1/volumes/{id}/renew: in one transaction, lock the volume, check it may be renewed,
 * create the volume.renew operation (pending, step renewing running), reserve its price in the
 * wallet and write the audit row. The worker does the renewal itself (RenewalExecutor).
 * Errors in the order of decisions.md: 404, 409 invalid_state, then 402.
 */
@Injectable()
export class RenewVolume {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly volumes: VolumeRepository,
    private readonly operations: OperationRepository,
    private readonly wallet: WalletLedger,
    private readonly audit: AuditTrail,
    private readonly clock: Clock,
  ) {}

  execute(principal: Principal, input: RenewVolumeInput, ip: string | null): Promise<{ volume: Volume; operation: Operation }> {
    return this.uow.run(async () => {
      // The row lock serialises renewals of one volume; the unique index on unfinished operations
      // is the last word should anything slip past it.
      const volume = await this.volumes.lockInOrg(principal.orgId, input.volumeId);
      if (!volume) throw notFound(`Volume ${input.volumeId} not found`);
      const quote = quoteRenewal(volume, input.termMonths, input.currency);
      const inTheWay = await this.operations.unfinishedForVolume(volume.id);
      if (inTheWay) throw operationInTheWay(volume.id, inTheWay);
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
      await this.operations.create(operation);
      if (quote.amount.minor > 0n) {
        const hold = await this.wallet.hold(principal.orgId, quote.amount, operation.id);
        if (!hold.held) throw insufficientBalance(quote.amount, hold.available);
      }
      await this.audit.record({
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
        },
      });
      return { volume, operation };
    });
  }
}
