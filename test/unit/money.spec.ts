import fc from 'fast-check';
import { DomainError } from '../../src/shared/kernel/errors/domain-error';
import { Money } from '../../src/shared/kernel/money/money';

const usdText = fc
  .tuple(fc.bigInt({ min: 0n, max: 10n ** 15n }), fc.integer({ min: 0, max: 99999 }))
  .map(([whole, frac]) => `${whole}.${String(frac).padStart(5, '0')}`);
const idrText = fc.bigInt({ min: 0n, max: 10n ** 18n }).map(String);
const minor = fc.bigInt({ min: 0n, max: 10n ** 20n });

describe('Money', () => {
  it('formats USD with exactly five decimals and IDR as whole rupiah', () => {
    expect(Money.ofMinor('USD', 2000n).format()).toBe('0.02000');
    expect(Money.ofMinor('USD', 10000000n).format()).toBe('100.00000');
    expect(Money.ofMinor('USD', 0n).format()).toBe('0.00000');
    expect(Money.ofMinor('USD', 1n).format()).toBe('0.00001');
    expect(Money.ofMinor('IDR', 1500000n).format()).toBe('1500000');
    expect(Money.ofMinor('IDR', 0n).format()).toBe('0');
  });

  it('parses what the seed and CLI accept, exactly', () => {
    expect(Money.parse('0.02000', 'USD').minor).toBe(2000n);
    expect(Money.parse('25.5', 'USD').minor).toBe(2550000n);
    expect(Money.parse('100', 'USD').minor).toBe(10000000n);
    expect(Money.parse('1500000', 'IDR').minor).toBe(1500000n);
  });

  it.each([
    ['0.000001', 'USD'],
    ['-1', 'USD'],
    ['1e3', 'USD'],
    ['1.', 'USD'],
    ['.5', 'USD'],
    [' 1', 'USD'],
    ['0x10', 'USD'],
    ['1.5', 'IDR'],
    ['', 'IDR'],
  ] as const)('refuses %p for %s with invalid_request naming the field', (text, currency) => {
    expect(() => Money.parse(text, currency, 'wallet.USD')).toThrow(DomainError);
    try {
      Money.parse(text, currency, 'wallet.USD');
    } catch (err) {
      expect((err as DomainError).code).toBe('invalid_request');
      expect((err as DomainError).details).toEqual({ field: 'wallet.USD' });
      expect((err as DomainError).message).toContain('wallet.USD');
    }
  });

  it('round-trips format(parse(x)) for every canonical USD and IDR string', () => {
    fc.assert(fc.property(usdText, (text) => Money.parse(text, 'USD').format() === text));
    fc.assert(fc.property(idrText, (text) => Money.parse(text, 'IDR').format() === text));
  });

  it('round-trips parse(format(m)) for every amount in minor units', () => {
    fc.assert(
      fc.property(minor, (m) => {
        expect(Money.parse(Money.ofMinor('USD', m).format(), 'USD').minor).toBe(m);
        expect(Money.parse(Money.ofMinor('IDR', m).format(), 'IDR').minor).toBe(m);
      }),
    );
  });

  it('multiplies exactly: (price x size) x term = price x (size x term), no drift at any scale', () => {
    fc.assert(
      fc.property(minor, fc.integer({ min: 1, max: 100000 }), fc.constantFrom(1, 3, 12), (price, size, term) => {
        const p = Money.ofMinor('USD', price);
        expect(p.times(size).times(term).minor).toBe(price * BigInt(size) * BigInt(term));
        expect(p.times(size).times(term).equals(p.times(size * term))).toBe(true);
      }),
    );
    // A value that a float would get wrong: 0.1 + 0.2 and a large IDR amount.
    expect(Money.parse('0.1', 'USD').plus(Money.parse('0.2', 'USD')).format()).toBe('0.30000');
    expect(Money.ofMinor('IDR', 9007199254740993n).times(3).format()).toBe('27021597764222979');
  });

  it('refuses fractional multipliers and mixing currencies', () => {
    expect(() => Money.ofMinor('USD', 1n).times(1.5)).toThrow(RangeError);
    expect(() => Money.ofMinor('USD', 1n).plus(Money.ofMinor('IDR', 1n))).toThrow(RangeError);
  });

  it('adds and subtracts and compares in minor units', () => {
    fc.assert(
      fc.property(minor, minor, (a, b) => {
        const x = Money.ofMinor('IDR', a);
        const y = Money.ofMinor('IDR', b);
        expect(x.plus(y).minus(y).equals(x)).toBe(true);
        expect(x.isLessThan(y)).toBe(a < b);
      }),
    );
  });
});
