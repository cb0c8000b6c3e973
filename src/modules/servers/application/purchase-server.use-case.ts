import { DEFAULT_ORGANIZATION_LIMITS, OrganizationPolicy, serverLimitOf } from '../../auth/application/organization-policy';
import { Injectable, Optional } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock, addMonthsClamped } from '../../../shared/kernel/clock/clock';
import { DomainError, invalidRequest, notFound } from '../../../shared/kernel/errors/domain-error';
import { newId } from '../../../shared/kernel/ids/ids';
import { Currency, Money, PricePair } from '../../../shared/kernel/money/money';
import { InjectedKey, ServerAccess } from '../../access/application/server-access';
import { Principal } from '../../auth/domain/principal';
import { OperationAcceptance } from '../../operations/application/operation-acceptance.port';
import { Operation } from '../../operations/domain/operation';
import { unknownRegion, unknownZone } from '../../options/domain/unknown-place';
import { Catalog } from '../../options/application/catalog.port';
import { ServerCatalogQueries } from '../../options/application/server-catalog-queries.port';
import { ServerOfferSnapshot } from '../../options/domain/server-options';
import { auditActor } from '../../audit/application/audit-actor';
import { RENEWAL_TERMS, TermMonths, termAmount } from '../../prepaid/domain/term';
import { AutoRenewInput, checkAutoRenew } from '../../prepaid/domain/auto-renew';
import { Settings } from '../../../shared/config/settings';
import { Labels, checkLabels } from '../../prepaid/domain/labels';
import { insufficientBalance } from '../../wallet/domain/wallet-errors';
import { Server, nameTaken } from '../domain/server';
import { ServerQuote, applyServerQuote, checkServerQuoteMatches } from '../domain/server-quote';
import { checkImageUsable, checkUserData, computeUnavailable, createSteps, outOfVcpus, purchasesPaused, serverQuotaReached } from '../domain/server-actions';
import { ComputeHealth, ServableImages } from './compute-provider.port';
import { OrganizationImages } from './organization-images.port';
import { createServerParams } from './server-operation-params';
import { ServerLifecycle } from './server-lifecycle.port';
import { ServerQuotes } from './server-quotes.port';
import { ServerWrites } from './servers.port';
import { checkServerName } from './update-server.use-case';

/** An organization's image id (`img_…`), rather than a catalog image's. */
export const isOrganizationImage = (id: string): boolean => id.startsWith('img_');

/** The members of POST /v1/servers, their JSON types already checked (undefined: not sent). */
export interface PurchaseServerInput {
  name: string;
  regionId: string;
  planId: string;
  image: string;
  termMonths: TermMonths;
  currency: Currency;
  zoneId?: string;
  /** Checked here (list, distinct, keys of the organization): 400 naming `ssh_key_ids[i]`. */
  sshKeyIds?: unknown;
  userData?: string;
  labels?: Record<string, unknown>;
  deleteProtection?: boolean;
  quoteId?: string;
  /** `{enabled, term_months?}` as sent: checked here (400 naming auto_renew.<member>; a term the region sells). */
  autoRenew?: unknown;
}

/** What the 400 checks found, for the transaction to use. */
export interface Checked {
  name: string;
  labels: Labels;
  userData: string | null;
  keys: InjectedKey[];
  offer: ServerOfferSnapshot | undefined;
  zone: { id: string; regionId: string; available: boolean } | undefined;
  quote: ServerQuote | undefined;
  autoRenew: AutoRenewInput | undefined;
}

/**
 * POST /v1/servers (servers.md "Server and buying"), errors in its order: 400 (checkBody, which
 * the controller runs before the Idempotency-Key is looked at and passes in; else run here) → 404 → 503
 * purchases_paused (nothing reserved) → 409 quote_expired, quote used (invalid_state), name taken
 * (conflict), no free vCPUs or zone not available (out_of_stock), 25 live servers (quota_exceeded,
 * counted under the organization row's lock) → 402 → 503 provider_unavailable (the compute
 * circuit open: the transaction rolls back, nothing reserved).
 *
 * One transaction writes the server (`creating`, price and specs frozen, expires_at = now +
 * term; the region counter's trigger reserves its vCPUs, its CHECK refuses them: out_of_stock),
 * the vm.create operation (payment_reserved succeeded; the SSH keys' public keys and user_data in
 * its params), the quote's use, the hold and the audit row (user_data's byte count only).
 */
@Injectable()
export class PurchaseServer {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly offers: ServerCatalogQueries,
    private readonly catalog: Catalog,
    private readonly access: ServerAccess,
    private readonly lifecycle: ServerLifecycle,
    private readonly writes: ServerWrites,
    private readonly quotes: ServerQuotes,
    private readonly acceptance: OperationAcceptance,
    private readonly health: ComputeHealth,
    private readonly clock: Clock,
    private readonly images: ServableImages,
    private readonly settings: Settings,
    private readonly orgImages: OrganizationImages,
    @Optional() private readonly policy?: OrganizationPolicy,
  ) {}

  /** Every 400 of the body, including those the catalog, the SSH keys and the quote tell (read only). */
  async checkBody(principal: Principal, input: PurchaseServerInput): Promise<Checked> {
    const name = checkServerName(input.name);
    const labels: Labels = input.labels === undefined ? {} : checkLabels(input.labels);
    const userData = checkUserData(input.userData);
    const offer = await this.offers.offerSnapshot(input.regionId);
    const sells = offer && offer.terms !== null ? offer : undefined;
    if (sells && !sells.terms!.includes(input.termMonths)) {
      throw invalidRequest(
        `term_months must be one of the terms sold for servers in ${input.regionId}: ${[...sells.terms!].sort((a, b) => a - b).join(', ')}`,
        { field: 'term_months' },
      );
    }
    const found = input.zoneId === undefined ? undefined : await this.catalog.findZone(input.zoneId);
    if (found && found.regionId !== input.regionId) {
      throw invalidRequest(`zone ${found.id} is in region ${found.regionId}, not in ${input.regionId}`, { field: 'zone' });
    }
    const keys = await this.access.resolveSshKeys(principal.orgId, input.sshKeyIds);
    const anyQuote = input.quoteId === undefined ? undefined : await this.quotes.findAnyInOrg(principal.orgId, input.quoteId);
    if (anyQuote && anyQuote.kind !== 'server') {
      throw invalidRequest(`quote_id ${input.quoteId} is a disk quote; a server purchase needs a server quote (POST /v1/quotes with plan)`, { field: 'quote_id' });
    }
    const quote = anyQuote?.kind === 'server' ? anyQuote : undefined;
    const autoRenew = input.autoRenew === undefined ? undefined : checkAutoRenew(input.autoRenew, sells ? sells.terms! : RENEWAL_TERMS);
    if (quote) checkServerQuoteMatches(quote, { regionId: input.regionId, planId: input.planId, termMonths: input.termMonths, currency: input.currency });
    // 400 last: a region or zone that does not exist, with the ids that would do (details.valid).
    if (!offer) throw unknownRegion(input.regionId, await this.catalog.regionIds());
    if (input.zoneId !== undefined && !found) throw unknownZone(input.zoneId, input.regionId, (await this.catalog.zonesOf(input.regionId)).map((z) => z.id));
    return { name, labels, userData, keys, offer: sells, zone: found && { id: found.id, regionId: found.regionId, available: found.available }, quote, autoRenew };
  }

  /** `checked`: checkBody's answer for this input, read just before (else read here, in the transaction). */
  async execute(principal: Principal, input: PurchaseServerInput, ip: string | null, checked?: Checked): Promise<{ server: Server; operation: Operation }> {
    return this.uow.run(async () => {
      const c = checked ?? (await this.checkBody(principal, input));
      const order = { regionId: input.regionId, planId: input.planId, termMonths: input.termMonths, currency: input.currency };

      // 404.
      if (!c.offer) throw notFound(`Region ${input.regionId} sells no servers`);
      const plan = c.offer.plans.find((p) => p.id === input.planId);
      if (!plan) throw notFound(`Plan ${input.planId} is not sold in ${input.regionId}`);
      if (isOrganizationImage(input.image)) {
        // The organization's own image: in this region, available, no larger than the plan's boot disk (its row share-locked to the commit).
        checkImageUsable(input.image, await this.orgImages.lockForUse(principal.orgId, input.image), { regionId: input.regionId, diskGb: plan.diskGb, planId: plan.id });
      } else {
        if (!c.offer.images.some((i) => i.id === input.image)) throw notFound(`Image ${input.image} not found`);
        const servable = this.images.servableImages();
        if (servable !== null && !servable.includes(input.image)) throw notFound(`Image ${input.image} is not offered: no host can serve it now (see GET /v1/server-options)`);
      }
      if (input.quoteId !== undefined && !c.quote) throw notFound(`Quote ${input.quoteId} not found`);

      // 503 purchases_paused: before any 409 and 402, nothing reserved (the switches read now).
      if (c.offer.purchasesPaused) throw purchasesPaused(input.regionId);

      // 409 quote (expired, used), then the price.
      const now = this.clock.now();
      let price: PricePair = { USD: plan.price.USD, IDR: plan.price.IDR };
      let amount: Money = termAmount(plan.price, input.currency, input.termMonths);
      if (c.quote) ({ price, amount } = applyServerQuote(c.quote, order, now));

      // Zone: the one named, else the first available by id (none: out_of_stock, after the name's conflict).
      const zones = c.offer.zones;
      const zone = c.zone ?? zones.find((z) => z.available) ?? zones[0];
      if (!zone) throw new DomainError('out_of_stock', `Region ${input.regionId} has no zone to put a server in`);

      // The organization's row locked: the name and the quota count below hold until commit.
      // Its server limit read with the lock, the live servers and the name's holder in one read after it.
      const { serverLimit: storedLimit, live, holder } = await this.lifecycle.lockOrgForPurchase(principal.orgId, c.name);
      if (holder !== undefined) throw nameTaken(c.name, holder);
      // The region's vCPUs as the offer was read: a region without room is refused here, before
      // anything is written; the counter's CHECK at the server's insert (last) decides a race.
      if (c.offer.vcpuCapacity - c.offer.vcpusUsed < plan.vcpus) throw outOfVcpus(input.regionId, plan.vcpus, plan.id);
      if (!zone.available) throw new DomainError('out_of_stock', `Zone ${zone.id} does not accept new servers at the moment; choose another zone`);
      // Without the organization policy (a narrowed module), the defaults, as limitsOf answers.
      const serverLimit = this.policy ? serverLimitOf(storedLimit) : DEFAULT_ORGANIZATION_LIMITS.servers;
      if (live + 1 > serverLimit) throw serverQuotaReached(serverLimit);
      const serverId = newId('vm');

      const operation = Operation.create({
        id: newId('op'),
        orgId: principal.orgId,
        type: 'vm.create',
        vmId: serverId,
        steps: createSteps(),
        params: createServerParams.write({
          zoneId: zone.id,
          planId: plan.id,
          vcpus: plan.vcpus,
          memoryGb: plan.memoryGb,
          diskGb: plan.diskGb,
          image: input.image,
          termMonths: input.termMonths,
          amount,
          sshKeys: c.keys.map((k) => ({ id: k.id, fingerprint: k.fingerprint, publicKey: k.publicKey })),
          userData: c.userData,
        }),
        createdAt: now,
      });
      if (c.quote && !(await this.quotes.markUsedByServer(c.quote.id, serverId, now))) {
        throw new DomainError('invalid_state', `Quote ${c.quote.id} was already used by another purchase; request a new one`);
      }
      // Then the server's row (the quote references it: a foreign key checked at commit): its
      // insert moves the region's vCPU counter and takes its IPv6 /64 (a trigger, in one of the
      // region's 16 slot rows that no other purchase holds, under that slot's CHECK), held from
      // here to the commit only: after the reads and the quote, before the wallet's row and the
      // audit head (every transaction takes region slot, wallet, audit head in that order: the audit head, locked until
      // commit, is the last lock taken). The name's unique index (conflict: a rename that raced
      // this purchase), then the CHECK (out_of_stock: purchases that raced for the last vCPUs)
      // decide here.
      let server: Server;
      try {
        server = await this.uow.savepoint(() =>
          this.lifecycle.insert({
            id: serverId,
            orgId: principal.orgId,
            name: c.name,
            regionId: input.regionId,
            zoneId: zone.id,
            planId: plan.id,
            vcpus: plan.vcpus,
            memoryGb: plan.memoryGb,
            diskGb: plan.diskGb,
            image: input.image,
            termMonths: input.termMonths,
            billing: amount,
            price,
            expiresAt: addMonthsClamped(now, input.termMonths),
            labels: c.labels,
            deleteProtection: input.deleteProtection ?? false,
            sshKeyIds: c.keys.map((k) => k.id),
            createdAt: now,
            ...(c.autoRenew ? { autoRenew: { enabled: c.autoRenew.enabled, termMonths: c.autoRenew.termMonths ?? null, leadS: this.settings.autoRenewLeadS } } : {}),
          }),
        );
      } catch (err) {
        if (err instanceof DomainError && err.code === 'conflict') throw nameTaken(c.name, await this.writes.liveIdByName(principal.orgId, c.name));
        throw err;
      }
      // Then, in one statement (OperationAcceptance), the wallet's row locked and the hold (402
      // when it does not cover the price: nothing written), the vm.create operation (its foreign
      // key to the server checked at commit) and the audit entry (the audit head last): region,
      // wallet, audit head, the order every transaction takes them in.
      const accepted = await this.acceptance.accept({
        operation,
        hold: amount,
        audit: {
          orgId: principal.orgId,
          ...auditActor(principal),
          action: 'server.create',
          targetId: serverId,
          ipAddress: ip,
          data: {
            operation_id: operation.id,
            name: c.name,
            region: input.regionId,
            zone: zone.id,
            plan: plan.id,
            image: input.image,
            term_months: input.termMonths,
            currency: amount.currency,
            amount: amount.format(),
            ssh_key_ids: c.keys.map((k) => k.id),
            // Never the content: its size only.
            user_data_bytes: c.userData === null ? 0 : Buffer.byteLength(c.userData, 'utf8'),
            labels: c.labels,
            delete_protection: input.deleteProtection ?? false,
            quote_id: input.quoteId ?? null,
          },
        },
      });
      if (accepted.kind === 'insufficient') throw insufficientBalance(amount, accepted.available);
      // A new server has no other operation: never busy.
      if (accepted.kind === 'busy') throw new Error(`Server ${serverId} has an unfinished operation ${accepted.operationId}`);
      // Last: while the compute provider is known to be down, the whole transaction rolls back (nothing reserved).
      if (this.health.isDown()) throw computeUnavailable();
      return { server, operation };
    });
  }
}
