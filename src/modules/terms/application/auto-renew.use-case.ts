import { Injectable, Logger } from '@nestjs/common';
import { Settings } from '../../../shared/config/settings';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { DomainError } from '../../../shared/kernel/errors/domain-error';
import { Currency } from '../../../shared/kernel/money/money';
import { AutoRenewAttempt } from '../../prepaid/domain/auto-renew';
import { RENEWAL_TERMS, TermMonths, isTerm } from '../../prepaid/domain/term';
import { ServerReads } from '../../servers/application/servers.port';
import { RenewServer } from '../../servers/application/server-power.use-cases';
import { presentServer } from '../../servers/domain/server-json';
import { RenewVolume } from '../../volumes/application/renew-volume.use-case';
import { VolumeRepository } from '../../volumes/application/volumes.port';
import { presentVolume } from '../../volumes/domain/volume-json';
import { EventOutbox } from '../../webhooks/application/event-outbox.port';
import { after } from '../domain/suspension';
import { TERM_SWEEP_BATCH } from './expire-terms.use-case';
import { SweepStep, inRounds } from './sweep-rounds';
import { AutoRenewDue, TermKind, TermStore } from './term-store.port';

/** Automatic renewal attempts per transition in each round of the term sweep (each attempt its own transaction). */
export const AUTO_RENEW_ROUND = 20;

/**
 * terms.md "Automatic renewal", run in the term sweep's rounds (a resource whose attempt is due is
 * not suspended before it is made): every
 * resource with auto-renew on whose next attempt is due (AUTO_RENEW_LEAD_S before expires_at, or
 * AUTO_RENEW_RETRY_S after an attempt the wallet could not pay, or at once when the wallet has
 * been credited in its currency since) gets one attempt: the renewal a customer's
 * `POST …/renew` makes (RenewVolume / RenewServer: same price rules, the frozen price, the
 * billing currency, term auto_renew.term_months or term_months), by actor system, audited with
 * `data.auto: true`, run by the operations engine (held now, captured once when it succeeds).
 *
 * One transaction per attempt, its resource claimed FOR UPDATE SKIP LOCKED (each once across
 * processes); the attempt in a savepoint, so a refused one leaves nothing of it. An accepted
 * attempt is recorded under the unique key (resource, expires_at): one per term end. A refused
 * one (insufficient_balance) is recorded with the 402's details, announced
 * (`server.auto_renew_failed` / `volume.auto_renew_failed`) and retried later.
 */
@Injectable()
export class AutoRenewTerms {
  private readonly logger = new Logger('AutoRenew');

  constructor(
    private readonly uow: UnitOfWork,
    private readonly store: TermStore,
    private readonly renewVolume: RenewVolume,
    private readonly renewServer: RenewServer,
    private readonly volumes: VolumeRepository,
    private readonly servers: ServerReads,
    private readonly outbox: EventOutbox,
    private readonly settings: Settings,
    private readonly clock: Clock,
  ) {}

  /** One sweep: how many attempts it made (accepted or not). */
  async execute(stopping: () => boolean = () => false, batch = TERM_SWEEP_BATCH): Promise<number> {
    const attempts = { n: 0 };
    await inRounds([{ batch, steps: this.steps(batch, attempts) }], stopping);
    return attempts.n;
  }

  /**
   * Its transitions, per kind: the resources whose wallet was credited since a failed attempt,
   * then those whose attempt is due. A step makes up to `batch` attempts, each in a transaction
   * of its own that claims its one resource (FOR UPDATE SKIP LOCKED): an attempt holds its
   * organization's wallet and audit rows for its own few statements only, not for a batch's
   * hundred (other transactions of the sweep, and of the API, touch those rows of every
   * organization). A step reports the resources it claimed (a full batch: more may be
   * due); `attempts` counts the attempts made.
   */
  steps(batch = TERM_SWEEP_BATCH, attempts: { n: number } = { n: 0 }): SweepStep[] {
    return (['volume', 'server'] as const).flatMap((kind) =>
      [
        (now: Date) => this.store.claimAutoRenewCredited(kind, now, 1),
        (now: Date) => this.store.claimAutoRenewDue(kind, now, 1),
      ].map((claim) => async () => {
        let claimed = 0;
        while (claimed < batch) {
          const one = await this.uow.run(async () => {
            const [r] = await claim(this.clock.now());
            if (!r) return false;
            attempts.n += (await this.attempt(kind, r)) ? 1 : 0;
            return true;
          });
          if (!one) break;
          claimed++;
        }
        return claimed;
      }),
    );
  }

  /** One resource, its row locked: whether an attempt was made. */
  private async attempt(kind: TermKind, r: AutoRenewDue): Promise<boolean> {
    const now = this.clock.now();
    const leadS = this.settings.autoRenewLeadS;
    if (r.leadS !== leadS) {
      // The setting changed since its schedule was computed: rescheduled, and attempted only if due under the new one.
      await this.store.setAutoRenewLead(kind, r.id, leadS);
      if (after(r.expiresAt, -leadS).getTime() > now.getTime()) return false;
    }
    const term = r.autoTermMonths ?? r.termMonths;
    const termMonths: TermMonths = isTerm(term) ? term : RENEWAL_TERMS[0];
    const system = { kind: 'system' as const, orgId: r.orgId };
    // Read before the attempt: a credit the attempt did not see comes after it.
    const walletSeq = await this.store.walletSeq(r.orgId);
    try {
      const operationId = await this.uow.savepoint(async () => {
        const { operation } =
          kind === 'volume'
            ? await this.renewVolume.execute(system, { volumeId: r.id, termMonths, auto: true }, null)
            : await this.renewServer.execute(system, { serverId: r.id, termMonths, auto: true }, null);
        if (!(await this.store.recordAutoRenewAttempt({ resourceId: r.id, orgId: r.orgId, expiresAt: r.expiresAt, at: now, outcome: 'accepted', operationId: operation.id }))) {
          throw new Error(`An automatic renewal of ${r.id} was accepted already for ${r.expiresAt.toISOString()}`);
        }
        return operation.id;
      });
      const lastAttempt: AutoRenewAttempt = { at: now.toISOString(), outcome: 'accepted', operation_id: operationId, required: null, available: null, currency: null };
      await this.store.saveAutoRenewOutcome(kind, r.id, { lastAttempt, retryAt: null, walletSeq: null });
      return true;
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      const retryAt = after(now, this.settings.autoRenewRetryS);
      if (err.code !== 'insufficient_balance') {
        // Refused for another reason (its disk or instance missing at the provider): tried again later, no attempt recorded.
        this.logger.warn(`Automatic renewal of ${kind} ${r.id} refused (${err.code}): ${err.message}; next try at ${retryAt.toISOString()}`);
        await this.store.postponeAutoRenew(kind, r.id, retryAt);
        return false;
      }
      const details = err.details as { required: string; available: string; currency: Currency };
      await this.store.recordAutoRenewAttempt({ resourceId: r.id, orgId: r.orgId, expiresAt: r.expiresAt, at: now, outcome: 'insufficient_balance', operationId: null });
      const lastAttempt: AutoRenewAttempt = {
        at: now.toISOString(), outcome: 'insufficient_balance', operation_id: null, required: details.required, available: details.available, currency: details.currency,
      };
      await this.store.saveAutoRenewOutcome(kind, r.id, { lastAttempt, retryAt, walletSeq });
      await this.announceFailure(kind, r, now);
      return true;
    }
  }

  private async announceFailure(kind: TermKind, r: AutoRenewDue, now: Date): Promise<void> {
    if (kind === 'volume') {
      const volume = await this.volumes.findInOrg(r.orgId, r.id);
      if (volume) await this.outbox.record({ orgId: r.orgId, type: 'volume.auto_renew_failed', createdAt: now, data: presentVolume(volume) });
    } else {
      const server = await this.servers.findInOrg(r.orgId, r.id);
      if (server) await this.outbox.record({ orgId: r.orgId, type: 'server.auto_renew_failed', createdAt: now, data: presentServer(server) });
    }
  }
}
