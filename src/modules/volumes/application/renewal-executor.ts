import { Injectable, OnModuleInit } from '@nestjs/common';
import { Clock } from '../../../shared/kernel/clock/clock';
import { invalidState } from '../../../shared/kernel/errors/domain-error';
import { OperationExecutor, OperationExecutors, OperationStepExecutor } from '../../operations/application/operation-executors';
import { JsonObject, Operation } from '../../operations/domain/operation';
import { renewTerms } from '../domain/renewal';
import { renewalParams } from './renewal-params';
import { VolumeRepository } from './volumes.port';

/**
 * Executes volume.renew: one step, `renewing`, with no external call, so the whole renewal is
 * the worker's one closing transaction: lock the volume, extend it (max(expires_at, now) +
 * term), set term and billing. A volume deleted meanwhile fails the operation with
 * invalid_state (the worker then releases the hold; the volume is untouched).
 */
@Injectable()
export class RenewalExecutor implements OperationExecutor, OnModuleInit {
  readonly type = 'volume.renew' as const;
  readonly steps: readonly OperationStepExecutor[] = [{ name: 'renewing', commit: (operation) => this.renew(operation) }];

  constructor(
    private readonly volumes: VolumeRepository,
    private readonly executors: OperationExecutors,
    private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    this.executors.register(this);
  }

  private async renew(operation: Operation): Promise<JsonObject> {
    const quote = renewalParams.read(operation.params);
    const volume = operation.volumeId ? await this.volumes.lockInOrg(operation.orgId, operation.volumeId) : undefined;
    if (!volume) throw invalidState(`Volume ${operation.volumeId} no longer exists`);
    const terms = renewTerms(volume, quote, this.clock.now());
    await this.volumes.saveRenewal(volume.id, terms);
    return {
      volume_id: volume.id,
      term_months: terms.termMonths,
      expires_at: terms.expiresAt.toISOString(),
      charged: { currency: terms.billing.currency, amount: terms.billing.format() },
    };
  }
}
