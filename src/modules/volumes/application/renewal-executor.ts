import { Injectable, OnModuleInit } from '@nestjs/common';
import { Clock } from '../../../shared/kernel/clock/clock';
import { invalidState } from '../../../shared/kernel/errors/domain-error';
import { OperationExecutor, OperationExecutors, OperationStepExecutor } from '../../operations/application/operation-executors';
import { JsonObject, Operation } from '../../operations/domain/operation';
import { isRenewable, renewTerms } from '../domain/renewal';
import { RenewalQuote, RenewedTerms } from '../../prepaid/domain/term';
import { Volume } from '../domain/volume';
import { renewalParams } from '../../prepaid/application/renewal-params';
import { VolumeRepository } from './volumes.port';
import { EventOutbox } from '../../webhooks/application/event-outbox.port';
import { presentVolume } from '../domain/volume-json';

/**
 * Executes volume.renew: one step, `renewing`, with no external call, so the whole renewal is
 * the worker's one closing transaction: lock the volume, extend it (max(expires_at, now) +
 * term), set term and billing. A volume deleted meanwhile fails the operation with
 * invalid_state (the worker then releases the hold; the volume is untouched).
 */
@Injectable()
export class RenewalExecutor implements OperationExecutor, OnModuleInit {
  readonly type = 'volume.renew' as const;
  readonly steps: readonly OperationStepExecutor[] = [
    { name: 'renewing', commit: (operation) => this.renew(operation), commitMany: (operations) => this.renewMany(operations) },
  ];

  constructor(
    private readonly volumes: VolumeRepository,
    private readonly executors: OperationExecutors,
    private readonly clock: Clock,
    private readonly outbox: EventOutbox,
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
    if (volume.status !== 'suspended') return resultOf(volume, terms);
    // terms.md "Renewal of a suspended resource": available again (not reattached), announced.
    const resumed = await this.volumes.lockInOrg(volume.orgId, volume.id);
    if (resumed) await this.outbox.record({ orgId: volume.orgId, type: 'volume.resumed', createdAt: this.clock.now(), data: presentVolume(resumed) });
    return { ...resultOf(volume, terms), previous_server_id: volume.previousServerId ?? null };
  }

  /**
   * renew() of a batch: the volumes locked in one statement (id order), the renewals written in
   * another. A renewal that cannot be done here (its volume gone or not renewable, unreadable
   * parameters, a second renewal of one volume) is left out for renew() to decide alone.
   */
  private async renewMany(operations: readonly Operation[]): Promise<Map<string, JsonObject>> {
    const quotes = new Map<string, { operation: Operation; volumeId: string; quote: RenewalQuote }>();
    const claimedVolumes = new Set<string>();
    for (const operation of operations) {
      const volumeId = operation.volumeId;
      if (!volumeId || claimedVolumes.has(volumeId)) continue;
      let quote: RenewalQuote;
      try {
        quote = renewalParams.read(operation.params);
      } catch {
        continue;
      }
      claimedVolumes.add(volumeId);
      quotes.set(operation.id, { operation, volumeId, quote });
    }
    const locked = await this.volumes.lockManyInOrgs([...quotes.values()].map((q) => ({ orgId: q.operation.orgId, id: q.volumeId })));
    const byId = new Map(locked.map((v) => [v.id, v]));
    const now = this.clock.now();
    const renewals: { id: string; terms: RenewedTerms }[] = [];
    const results = new Map<string, JsonObject>();
    for (const [operationId, q] of quotes) {
      const volume = byId.get(q.volumeId);
      // A suspended volume is resumed by renew() alone (its event).
      if (!volume || volume.orgId !== q.operation.orgId || !isRenewable(volume) || volume.status === 'suspended') continue;
      const terms = renewTerms(volume, q.quote, now);
      renewals.push({ id: volume.id, terms });
      results.set(operationId, resultOf(volume, terms));
    }
    await this.volumes.saveRenewals(renewals);
    return results;
  }
}

function resultOf(volume: Volume, terms: RenewedTerms): JsonObject {
  return {
    volume_id: volume.id,
    term_months: terms.termMonths,
    expires_at: terms.expiresAt.toISOString(),
    charged: { currency: terms.billing.currency, amount: terms.billing.format() },
  };
}
