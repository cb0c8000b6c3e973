import { Injectable, Logger } from '@nestjs/common';
import { Settings } from '../../../shared/config/settings';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { DomainError } from '../../../shared/kernel/errors/domain-error';
import { Money } from '../../../shared/kernel/money/money';
import { OperationAcceptance, OperationToAccept } from '../../operations/application/operation-acceptance.port';
import { AutoRenewAttempt } from '../../prepaid/domain/auto-renew';
import { RENEWAL_TERMS, isTerm } from '../../prepaid/domain/term';
import { ServerReads } from '../../servers/application/servers.port';
import { RenewServer } from '../../servers/application/server-power.use-cases';
import { Server } from '../../servers/domain/server';
import { serverBusy } from '../../servers/domain/server-actions';
import { presentServer } from '../../servers/domain/server-json';
import { RenewVolume } from '../../volumes/application/renew-volume.use-case';
import { VolumeRepository } from '../../volumes/application/volumes.port';
import { Volume } from '../../volumes/domain/volume';
import { operationInTheWay } from '../../volumes/domain/volume-actions';
import { presentVolume } from '../../volumes/domain/volume-json';
import { EventOutbox } from '../../webhooks/application/event-outbox.port';
import { EventRecord } from '../../webhooks/domain/events';
import { after } from '../domain/suspension';
import { SweepStep, inRounds } from './sweep-rounds';
import { AutoRenewDue, AutoRenewOutcome, TermKind, TermStore } from './term-store.port';

/** Automatic renewal attempts per transition in each round of the term sweep (one transaction, one acceptance statement). */
export const AUTO_RENEW_ROUND = 200;

/**
 * terms.md "Automatic renewal", run in the term sweep's rounds (a resource whose attempt is due is
 * not suspended before it is made): every resource with auto-renew on whose next attempt is due
 * (AUTO_RENEW_LEAD_S before expires_at, or AUTO_RENEW_RETRY_S after an attempt the wallet could
 * not pay, or at once when the wallet has been credited in its currency since) gets one attempt:
 * the renewal a customer's `POST …/renew` makes (RenewVolume / RenewServer decide it: same checks
 * and price rules, the frozen price, the billing currency, term auto_renew.term_months or
 * term_months), by actor system, audited with `data.auto: true`, run by the operations engine
 * (held now, captured once when it succeeds).
 *
 * Set-based, a batch of resources per transaction: claimed FOR UPDATE SKIP LOCKED (each once
 * across processes), their renewals accepted by one statement (OperationAcceptance.acceptMany:
 * per organization and currency, in the order of their attempts' times, while the balance covers
 * them), the attempts recorded and the outcomes stored one statement each. An accepted attempt
 * is recorded under the unique key (resource, expires_at): one per term end. A refused one
 * (insufficient_balance) is recorded with what the balance had left at its turn, announced
 * (`server.auto_renew_failed` / `volume.auto_renew_failed`) and retried later; one refused for
 * another reason (its disk or instance missing at the provider) is tried again later, unrecorded.
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
    private readonly acceptance: OperationAcceptance,
    private readonly outbox: EventOutbox,
    private readonly settings: Settings,
    private readonly clock: Clock,
  ) {}

  /** One sweep: how many attempts it made (accepted or not). */
  async execute(stopping: () => boolean = () => false, batch = AUTO_RENEW_ROUND): Promise<number> {
    const attempts = { n: 0 };
    await inRounds([{ batch, steps: this.steps(batch, attempts) }], stopping);
    return attempts.n;
  }

  /**
   * Its transitions, per kind: the resources whose wallet was credited since a failed attempt,
   * then those whose attempt is due. A step claims up to `batch` resources and attempts them in
   * one transaction; it reports the resources it claimed (a full batch: more may be due);
   * `attempts` counts the attempts made.
   */
  steps(batch = AUTO_RENEW_ROUND, attempts: { n: number } = { n: 0 }): SweepStep[] {
    return (['volume', 'server'] as const).flatMap((kind) =>
      [
        (now: Date) => this.store.claimAutoRenewCredited(kind, now, batch),
        (now: Date) => this.store.claimAutoRenewDue(kind, now, batch),
      ].map((claim) => () =>
        this.uow.run(async () => {
          const claimed = await claim(this.clock.now());
          if (claimed.length > 0) attempts.n += await this.attemptMany(kind, claimed);
          return claimed.length;
        }),
      ),
    );
  }

  /** The claimed resources (rows locked): how many attempts were made. */
  private async attemptMany(kind: TermKind, claimed: AutoRenewDue[]): Promise<number> {
    const now = this.clock.now();
    const leadS = this.settings.autoRenewLeadS;
    const due: AutoRenewDue[] = [];
    for (const r of claimed) {
      if (r.leadS !== leadS) {
        // The setting changed since its schedule was computed: rescheduled, and attempted only if due under the new one.
        await this.store.setAutoRenewLead(kind, r.id, leadS);
        if (after(r.expiresAt, -leadS).getTime() > now.getTime()) continue;
      }
      due.push(r);
    }
    if (due.length === 0) return 0;
    // Each organization's attempts together, in the order claimed (their attempts' times).
    due.sort((a, b) => (a.orgId < b.orgId ? -1 : a.orgId > b.orgId ? 1 : 0));
    const refs = due.map((r) => ({ orgId: r.orgId, id: r.id }));
    const [rows, walletSeqs] = await Promise.all([
      kind === 'volume' ? this.volumes.lockManyInOrgs(refs) : this.servers.findManyInOrgs(refs),
      // Read before the attempts: a credit they did not see comes after these positions.
      this.store.walletSeqs(due.map((r) => r.orgId)),
    ]);
    const byId = new Map<string, Volume | Server>(rows.map((row) => [row.id, row]));
    const retryAt = after(now, this.settings.autoRenewRetryS);
    const tried: { r: AutoRenewDue; request: OperationToAccept & { hold: Money } }[] = [];
    for (const r of due) {
      const resource = byId.get(r.id);
      if (!resource) continue;
      const term = r.autoTermMonths ?? r.termMonths;
      const input = { termMonths: isTerm(term) ? term : RENEWAL_TERMS[0], auto: true };
      const system = { kind: 'system' as const, orgId: r.orgId };
      try {
        const request =
          kind === 'volume'
            ? this.renewVolume.toAccept(system, resource as Volume, { volumeId: r.id, ...input }, null)
            : await this.renewServer.toAccept(system, resource as Server, input);
        tried.push({ r, request });
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
        await this.postpone(kind, r, err, retryAt);
      }
    }
    const outcomes = await this.acceptance.acceptMany(tried.map((t) => t.request));
    const recorded: Parameters<TermStore['recordAutoRenewAttempts']>[0][number][] = [];
    const saved: { id: string; outcome: AutoRenewOutcome }[] = [];
    const failed: AutoRenewDue[] = [];
    for (const [i, { r, request }] of tried.entries()) {
      const outcome = outcomes[i];
      const attempt = { resourceId: r.id, orgId: r.orgId, expiresAt: r.expiresAt, at: now };
      if (outcome.kind === 'accepted') {
        const operationId = request.operation.id;
        recorded.push({ ...attempt, outcome: 'accepted', operationId });
        saved.push({ id: r.id, outcome: { lastAttempt: { at: now.toISOString(), outcome: 'accepted', operation_id: operationId, required: null, available: null, currency: null }, retryAt: null, walletSeq: null } });
      } else if (outcome.kind === 'insufficient') {
        recorded.push({ ...attempt, outcome: 'insufficient_balance', operationId: null });
        const lastAttempt: AutoRenewAttempt = {
          at: now.toISOString(), outcome: 'insufficient_balance', operation_id: null,
          required: request.hold.format(), available: outcome.available.format(), currency: request.hold.currency,
        };
        saved.push({ id: r.id, outcome: { lastAttempt, retryAt, walletSeq: walletSeqs.get(r.orgId) ?? '0' } });
        failed.push(r);
      } else {
        await this.postpone(kind, r, kind === 'volume' ? operationInTheWay(r.id, outcome.operationId) : serverBusy(r.id, outcome.operationId), retryAt);
      }
    }
    const stored = await this.store.recordAutoRenewAttempts(recorded);
    const twice = recorded.find((a) => a.outcome === 'accepted' && !stored.has(a.resourceId));
    // The claim leaves out a resource renewed for this term end; the unique key is the last word (the whole batch undone).
    if (twice) throw new Error(`An automatic renewal of ${twice.resourceId} was accepted already for ${twice.expiresAt.toISOString()}`);
    await this.store.saveAutoRenewOutcomes(kind, saved);
    await this.announceFailures(kind, failed, now);
    return recorded.length;
  }

  /** Refused for another reason than money: tried again later, no attempt recorded. */
  private async postpone(kind: TermKind, r: AutoRenewDue, err: DomainError, retryAt: Date): Promise<void> {
    this.logger.warn(`Automatic renewal of ${kind} ${r.id} refused (${err.code}): ${err.message}; next try at ${retryAt.toISOString()}`);
    await this.store.postponeAutoRenew(kind, r.id, retryAt);
  }

  /** The failure events of the organizations subscribed to them, each resource presented as it is now. */
  private async announceFailures(kind: TermKind, failed: AutoRenewDue[], now: Date): Promise<void> {
    if (failed.length === 0) return;
    const type = kind === 'volume' ? 'volume.auto_renew_failed' : 'server.auto_renew_failed';
    const wanted = await this.outbox.wanted(failed.map((r) => ({ orgId: r.orgId, type })));
    const events: EventRecord[] = [];
    for (const i of wanted) {
      const r = failed[i];
      if (kind === 'volume') {
        const volume = await this.volumes.findInOrg(r.orgId, r.id);
        if (volume) events.push({ orgId: r.orgId, type, createdAt: now, data: presentVolume(volume) });
      } else {
        const server = await this.servers.findInOrg(r.orgId, r.id);
        if (server) events.push({ orgId: r.orgId, type, createdAt: now, data: presentServer(server) });
      }
    }
    await this.outbox.recordMany(events);
  }
}
