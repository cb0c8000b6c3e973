import { FixedClock } from '../../src/shared/kernel/clock/clock';
import { refusalOf } from '../support/assertions';
import { Money } from '../../src/shared/kernel/money/money';
import { VolumeOffer } from '../../src/modules/options/domain/catalog';
import { OrderTerms, Quote, applyQuote, makeQuote } from '../../src/modules/volumes/domain/quote';
import { InMemoryQuoteRepository } from '../../src/modules/volumes/testing/in-memory-quotes';

const OFFER: VolumeOffer = {
  regionId: 'id-jkt', type: 'premium', minGb: 10, maxGb: 4000, stepGb: 10, terms: [1, 3, 12], perServerLimit: 8,
  price: { USD: Money.parse('0.02', 'USD'), IDR: Money.parse('320', 'IDR') },
};
const ORDER: OrderTerms = { regionId: 'id-jkt', type: 'premium', sizeGb: 150, termMonths: 12, currency: 'USD' };
const T0 = new Date('2026-11-23T10:00:00.000Z');


describe('makeQuote', () => {
  it('freezes both prices and the exact amount: 150 GB × 0.02000 USD × 12 = 36.00000; expires 10 minutes later', () => {
    const q = makeQuote('quo_1', 'org_1', OFFER, ORDER, T0);
    expect({ ...q, price: { USD: q.price.USD.format(), IDR: q.price.IDR.format() }, amount: q.amount.toJSON() }).toEqual({
      id: 'quo_1', orgId: 'org_1', regionId: 'id-jkt', type: 'premium', sizeGb: 150, termMonths: 12, currency: 'USD',
      price: { USD: '0.02000', IDR: '320' }, amount: { currency: 'USD', amount: '36.00000' },
      createdAt: T0, expiresAt: new Date('2026-11-23T10:10:00.000Z'), usedAt: null,
    });
    expect(makeQuote('quo_2', 'org_1', OFFER, { ...ORDER, currency: 'IDR', sizeGb: 4000, termMonths: 3 }, T0).amount.toJSON()).toEqual({
      currency: 'IDR',
      amount: '3840000',
    });
  });

  it.each([
    [{ sizeGb: 5 }, 'size_gb', 'size_gb must be from 10 to 4000 in steps of 10 (10, 20, ...) for premium in id-jkt; got 5'],
    [{ sizeGb: 4010 }, 'size_gb', 'size_gb must be from 10 to 4000 in steps of 10 (10, 20, ...) for premium in id-jkt; got 4010'],
    [{ sizeGb: 15 }, 'size_gb', 'size_gb must be from 10 to 4000 in steps of 10 (10, 20, ...) for premium in id-jkt; got 15'],
  ])('refuses %p with 400 naming %s', (change, field, message) => {
    expect(refusalOf(() => makeQuote('quo_1', 'org_1', OFFER, { ...ORDER, ...change }, T0))).toEqual({ code: 'invalid_request', message, details: { field } });
  });

  it('refuses a term the offer does not sell', () => {
    const offer = { ...OFFER, terms: [12, 1] };
    expect(refusalOf(() => makeQuote('quo_1', 'org_1', offer, { ...ORDER, termMonths: 3 }, T0))).toEqual({
      code: 'invalid_request',
      message: 'term_months must be one of the terms sold for premium in id-jkt: 1, 12',
      details: { field: 'term_months' },
    });
  });
});

describe('applyQuote', () => {
  const clock = new FixedClock(T0);
  let quote: Quote;
  beforeEach(() => {
    clock.set(T0);
    quote = makeQuote('quo_1', 'org_1', OFFER, ORDER, clock.now());
  });

  it('gives the quoted price for the same order up to 10 minutes later, even when the offer changed since', () => {
    clock.advance(10 * 60 * 1000);
    const applied = applyQuote(quote, { ...ORDER }, clock.now());
    expect({ USD: applied.price.USD.format(), IDR: applied.price.IDR.format(), amount: applied.amount.toJSON() }).toEqual({
      USD: '0.02000', IDR: '320', amount: { currency: 'USD', amount: '36.00000' },
    });
  });

  it.each([
    [{ regionId: 'sg-sin' }, 'region', 'region ("sg-sin") differs from quote quo_1 ("id-jkt"); send the quote\'s region or leave out quote_id'],
    [{ type: 'ssd' as const }, 'type', 'type ("ssd") differs from quote quo_1 ("premium"); send the quote\'s type or leave out quote_id'],
    [{ sizeGb: 160 }, 'size_gb', 'size_gb (160) differs from quote quo_1 (150); send the quote\'s size_gb or leave out quote_id'],
    [{ termMonths: 1 as const }, 'term_months', 'term_months (1) differs from quote quo_1 (12); send the quote\'s term_months or leave out quote_id'],
    [{ currency: 'IDR' as const }, 'currency', 'currency ("IDR") differs from quote quo_1 ("USD"); send the quote\'s currency or leave out quote_id'],
  ])('a differing member %p is 400 naming %s', (change, field, message) => {
    expect(refusalOf(() => applyQuote(quote, { ...ORDER, ...change }, clock.now()))).toEqual({ code: 'invalid_request', message, details: { field } });
  });

  it('older than 10 minutes: 409 quote_expired', () => {
    clock.advance(10 * 60 * 1000 + 1);
    expect(refusalOf(() => applyQuote(quote, ORDER, clock.now()))).toEqual({
      code: 'quote_expired',
      message: 'Quote quo_1 expired at 2026-11-23T10:10:00.000Z (quotes last 10 minutes); request a new one',
      details: undefined,
    });
  });

  it('used: 409 invalid_state; a differing member is still 400 first, and expiry comes before use', () => {
    const used = { ...quote, usedAt: new Date('2026-11-23T10:01:00.000Z') };
    expect(refusalOf(() => applyQuote(used, ORDER, clock.now()))).toEqual({
      code: 'invalid_state',
      message: 'Quote quo_1 was already used by a purchase at 2026-11-23T10:01:00.000Z; request a new one',
      details: undefined,
    });
    expect(refusalOf(() => applyQuote(used, { ...ORDER, sizeGb: 10 }, clock.now())).code).toBe('invalid_request');
    clock.advance(11 * 60 * 1000);
    expect(refusalOf(() => applyQuote(used, ORDER, clock.now())).code).toBe('quote_expired');
  });

  it('a quote is marked used once (the in-memory port, as the database does with its conditional update)', async () => {
    const repo = new InMemoryQuoteRepository();
    await repo.create(quote);
    expect(await repo.markUsed('quo_1', 'vol_1', T0)).toBe(true);
    expect(await repo.markUsed('quo_1', 'vol_2', T0)).toBe(false);
    expect((await repo.findInOrg('org_1', 'quo_1'))?.usedAt).toEqual(T0);
    expect(await repo.findInOrg('org_2', 'quo_1')).toBeUndefined();
  });
});
