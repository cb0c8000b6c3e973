import { Injectable } from '@nestjs/common';
import { Clock } from '../../../shared/kernel/clock/clock';
import { notFound } from '../../../shared/kernel/errors/domain-error';
import { newId } from '../../../shared/kernel/ids/ids';
import { Principal } from '../../auth/domain/principal';
import { unknownRegion } from '../../options/domain/unknown-place';
import { Catalog } from '../../options/application/catalog.port';
import { OrderTerms, Quote, makeQuote } from '../domain/quote';
import { QuoteRepository } from './quotes.port';

/**
 * POST /v1/quotes: the price of an order, locked for 10 minutes (lifecycle.md "Quotes").
 * Checked as a purchase is: 400 for a region that does not exist (details.valid), 404 for one selling no disk of the type,
 * then 400 for a size or term the offer does not sell. Stock and balance are not checked: a
 * quote locks the price only.
 */
@Injectable()
export class CreateQuote {
  constructor(
    private readonly catalog: Catalog,
    private readonly quotes: QuoteRepository,
    private readonly clock: Clock,
  ) {}

  async execute(principal: Principal, order: OrderTerms): Promise<Quote> {
    const offer = await this.catalog.offer(order.regionId, order.type);
    if (!offer) {
      if (!(await this.catalog.regionExists(order.regionId))) throw unknownRegion(order.regionId, await this.catalog.regionIds());
      throw notFound(`Region ${order.regionId} sells no ${order.type} disks`);
    }
    const quote = makeQuote(newId('quo'), principal.orgId, offer, order, this.clock.now());
    await this.quotes.create(quote);
    return quote;
  }
}

/** GET /v1/quotes/{id}: one quote of the organization; another organization's is 404. */
@Injectable()
export class QuoteQueries {
  constructor(private readonly quotes: QuoteRepository) {}

  async get(principal: Principal, id: string): Promise<Quote> {
    const quote = await this.quotes.findInOrg(principal.orgId, id);
    if (!quote) throw notFound(`Quote ${id} not found`);
    return quote;
  }
}
