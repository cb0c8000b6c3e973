import { Money } from '../../../shared/kernel/money/money';

const group = (digits: string, separator: string): string => digits.replace(/\B(?=(\d{3})+(?!\d))/g, separator);

/**
 * An amount as a customer reads it on the hosted checkout: USD with its symbol, thousands
 * separated by commas and two decimals ("$1,250.00"; top-ups are whole cents); IDR with "Rp",
 * thousands separated by dots as in Indonesia, no decimals ("Rp 150.000").
 */
export function displayAmount(amount: Money): string {
  const [whole, fraction = ''] = amount.format().split('.');
  if (amount.currency === 'USD') {
    const cents = fraction.replace(/0+$/, '').padEnd(2, '0');
    return `$${group(whole, ',')}.${cents}`;
  }
  return `Rp ${group(whole, '.')}`;
}
