import { DomainError } from '../../../shared/kernel/errors/domain-error';
import { Money } from '../../../shared/kernel/money/money';

/** 402: the wallet's available balance cannot cover `required`. Details formatted as interface.md 2.2. */
export function insufficientBalance(required: Money, available: Money): DomainError {
  return new DomainError(
    'insufficient_balance',
    `The wallet cannot cover ${required.format()} ${required.currency}; available: ${available.format()} ${available.currency}`,
    { required: required.format(), available: available.format(), currency: required.currency },
  );
}
