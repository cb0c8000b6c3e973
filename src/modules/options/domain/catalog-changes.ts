import { invalidRequest } from '../../../shared/kernel/errors/domain-error';
import { CURRENCIES, Money, PricePair } from '../../../shared/kernel/money/money';

/** Largest capacity accepted: stays an exact JS integer. */
const MAX_CAPACITY = Number.MAX_SAFE_INTEGER;

/**
 * A capacity (GB, vCPUs): a whole number, 0 or more, given as a JSON number (admin API) or a
 * digit string (CLI); `field` is the caller's name for it.
 */
export function capacityValue(raw: unknown, field: string, unit: string): number {
  const ok =
    (typeof raw === 'number' && Number.isSafeInteger(raw) && raw >= 0) ||
    (typeof raw === 'string' && /^\d{1,16}$/.test(raw) && Number(raw) <= MAX_CAPACITY);
  if (!ok) throw invalidRequest(`${field} must be a whole number of ${unit}, 0 or more`, { field });
  return Number(raw);
}

/** A switch: a JSON boolean (admin API) or "true" / "false" (CLI). */
export function switchValue(raw: unknown, field: string): boolean {
  if (raw === true || raw === 'true') return true;
  if (raw === false || raw === 'false') return false;
  throw invalidRequest(`${field} must be true or false`, { field });
}

/**
 * A price pair `{USD, IDR}`: both present, each a decimal string of its currency's precision
 * (USD at most 5 decimals, IDR whole rupiah), more than 0 (a price change never gives a resource
 * away); nothing else in it.
 */
export function priceValue(raw: unknown, field: string): PricePair {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw invalidRequest(`${field} must be an object {USD, IDR} of decimal strings`, { field });
  }
  const members = raw as Record<string, unknown>;
  for (const key of Object.keys(members)) {
    if (!(CURRENCIES as readonly string[]).includes(key)) throw invalidRequest(`${field}.${key} is not a currency; give USD and IDR`, { field: `${field}.${key}` });
  }
  const one = (currency: 'USD' | 'IDR'): Money => {
    const text = members[currency];
    const at = `${field}.${currency}`;
    if (typeof text !== 'string') throw invalidRequest(`${at} is required: a decimal string such as "0.12"`, { field: at });
    const money = Money.parse(text, currency, at);
    if (money.minor <= 0n) throw invalidRequest(`${at} must be more than 0`, { field: at });
    return money;
  };
  return { USD: one('USD'), IDR: one('IDR') };
}
