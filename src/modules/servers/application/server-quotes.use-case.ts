import { Injectable } from '@nestjs/common';
import { Clock } from '../../../shared/kernel/clock/clock';
import { invalidRequest, notFound } from '../../../shared/kernel/errors/domain-error';
import { newId } from '../../../shared/kernel/ids/ids';
import { Principal } from '../../auth/domain/principal';
import { unknownRegion } from '../../options/domain/unknown-place';
import { Catalog } from '../../options/application/catalog.port';
import { ServerCatalogQueries } from '../../options/application/server-catalog-queries.port';
import { ServerOrderTerms, ServerQuote, makeServerQuote } from '../domain/server-quote';
import { ServerQuotes } from './server-quotes.port';

/**
 * POST /v1/quotes with `plan` (servers.md): a server's price locked for 10 minutes, checked as a
 * purchase is: 400 for a region that does not exist (details.valid) or a term the region does not
 * sell, 404 for a region that sells no servers or a plan not sold there. Stock, the purchase switches and the balance are
 * checked at purchase.
 */
@Injectable()
export class CreateServerQuote {
  constructor(
    private readonly offers: ServerCatalogQueries,
    private readonly catalog: Catalog,
    private readonly quotes: ServerQuotes,
    private readonly clock: Clock,
  ) {}

  async execute(principal: Principal, order: ServerOrderTerms): Promise<ServerQuote> {
    const offer = await this.offers.offerSnapshot(order.regionId);
    if (!offer) throw unknownRegion(order.regionId, await this.catalog.regionIds());
    if (offer && offer.terms !== null && !offer.terms.includes(order.termMonths)) {
      throw invalidRequest(`term_months must be one of the terms sold for servers in ${order.regionId}: ${[...offer.terms].sort((a, b) => a - b).join(', ')}`, {
        field: 'term_months',
      });
    }
    if (offer.terms === null) throw notFound(`Region ${order.regionId} sells no servers`);
    const plan = offer.plans.find((p) => p.id === order.planId);
    if (!plan) throw notFound(`Plan ${order.planId} is not sold in ${order.regionId}`);
    const quote = makeServerQuote(newId('quo'), principal.orgId, order, plan.price, this.clock.now());
    await this.quotes.create(quote);
    return quote;
  }

  /** The organization's server quote, or undefined (none, or a disk quote). */
  async find(principal: Principal, id: string): Promise<ServerQuote | undefined> {
    const quote = await this.quotes.findAnyInOrg(principal.orgId, id);
    return quote?.kind === 'server' ? quote : undefined;
  }
}

/** A server quote on the wire (servers.md). */
export function presentServerQuote(q: ServerQuote) {
  return {
    id: q.id,
    kind: 'server' as const,
    region: q.regionId,
    plan: q.planId,
    term_months: q.termMonths,
    currency: q.currency,
    price_per_month: { USD: q.price.USD.format(), IDR: q.price.IDR.format() },
    amount: q.amount.format(),
    created_at: q.createdAt.toISOString(),
    expires_at: q.expiresAt.toISOString(),
    used_at: q.usedAt ? q.usedAt.toISOString() : null,
  };
}
