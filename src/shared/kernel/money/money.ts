import { invalidRequest } from '../errors/domain-error';

export const CURRENCIES = ['USD', 'IDR'] as const;
export type Currency = (typeof CURRENCIES)[number];

/** Minor-unit scale: USD is held in 1e-5 dollars, IDR in whole rupiah. */
const SCALE: Record<Currency, number> = { USD: 5, IDR: 0 };

export function isCurrency(value: unknown): value is Currency {
  return typeof value === 'string' && (CURRENCIES as readonly string[]).includes(value);
}

/**
 * An amount of one currency in integer minor units. Never a JS number: every operation is
 * bigint, so 0.1 + 0.2 problems cannot occur.
 */
export class Money {
  private constructor(
    readonly currency: Currency,
    readonly minor: bigint,
  ) {}

  static ofMinor(currency: Currency, minor: bigint): Money {
    return new Money(currency, minor);
  }

  static zero(currency: Currency): Money {
    return new Money(currency, 0n);
  }

  /**
   * Parses a non-negative decimal string with at most the currency's number of decimals
   * ("12", "12.5", "12.50000" for USD; "1500000" for IDR). Anything else throws invalid_request.
   */
  static parse(text: string, currency: Currency, field = 'amount'): Money {
    const scale = SCALE[currency];
    const pattern = scale === 0 ? /^(\d{1,30})$/ : new RegExp(`^(\\d{1,30})(?:\\.(\\d{1,${scale}}))?$`);
    const match = pattern.exec(text);
    if (!match) {
      const allowed = scale === 0 ? 'a whole number of rupiah' : `a decimal with at most ${scale} decimals`;
      throw invalidRequest(`${field} must be ${allowed} for ${currency}, got "${text}"`, { field });
    }
    const whole = BigInt(match[1]);
    const fraction = (match[2] ?? '').padEnd(scale, '0');
    return new Money(currency, whole * 10n ** BigInt(scale) + (fraction ? BigInt(fraction) : 0n));
  }

  /** USD with exactly five decimals, IDR as whole rupiah (interface.md 2.2). */
  format(): string {
    const scale = SCALE[this.currency];
    const negative = this.minor < 0n;
    const abs = negative ? -this.minor : this.minor;
    const digits = abs.toString();
    if (scale === 0) return (negative ? '-' : '') + digits;
    const padded = digits.padStart(scale + 1, '0');
    const whole = padded.slice(0, padded.length - scale);
    const fraction = padded.slice(padded.length - scale);
    return `${negative ? '-' : ''}${whole}.${fraction}`;
  }

  /** Multiplies by a whole factor (GB, months). Exact: no rounding is ever needed. */
  times(factor: number | bigint): Money {
    if (typeof factor === 'number' && !Number.isSafeInteger(factor)) {
      throw new RangeError(`Money can only be multiplied by a whole number, got ${factor}`);
    }
    return new Money(this.currency, this.minor * BigInt(factor));
  }

  plus(other: Money): Money {
    this.sameCurrency(other);
    return new Money(this.currency, this.minor + other.minor);
  }

  minus(other: Money): Money {
    this.sameCurrency(other);
    return new Money(this.currency, this.minor - other.minor);
  }

  isLessThan(other: Money): boolean {
    this.sameCurrency(other);
    return this.minor < other.minor;
  }

  equals(other: Money): boolean {
    return this.currency === other.currency && this.minor === other.minor;
  }

  toJSON(): { currency: Currency; amount: string } {
    return { currency: this.currency, amount: this.format() };
  }

  private sameCurrency(other: Money): void {
    if (other.currency !== this.currency) {
      throw new RangeError(`Cannot combine ${this.currency} with ${other.currency}`);
    }
  }
}

/** Prices per GB per month in both currencies, frozen on a volume at purchase. */
export interface PricePair {
  USD: Money;
  IDR: Money;
}

/** A price pair from the database's minor-unit columns (numeric as text). */
export function pricePairOfMinor(usdMinor: string | bigint, idrMinor: string | bigint): PricePair {
  return { USD: Money.ofMinor('USD', BigInt(usdMinor)), IDR: Money.ofMinor('IDR', BigInt(idrMinor)) };
}

export function formatPricePair(price: PricePair): { USD: string; IDR: string } {
  return { USD: price.USD.format(), IDR: price.IDR.format() };
}
