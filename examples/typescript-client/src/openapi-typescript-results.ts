/**
 * The same proof as operation-results.ts with the other common generator, openapi-typescript
 * (types only, no client): `components['schemas']['Operation']` is a union told apart by
 * `type`, so checking the type types `result` without a cast. Type-checked with `--strict` by
 * `npm run openapi:client`, after `openapi-typescript` writes ./generated/openapi-typescript.ts.
 */
import type { components } from './generated/openapi-typescript';

type Operation = components['schemas']['Operation'];
type VolumeCreateResult = components['schemas']['VolumeCreateResult'];

/** The purchase's outcome once a volume.create operation succeeded, typed by the generator. */
export function purchaseResultOf(operation: Operation): VolumeCreateResult | null {
  if (operation.type !== 'volume.create') return null;
  const result: VolumeCreateResult | null = operation.result;
  return result;
}

/** The charge of a finished purchase, as a string of minor units never parsed into a float. */
export function chargedOf(operation: Operation): string | null {
  const result = purchaseResultOf(operation);
  return result ? `${result.charged.amount} ${result.charged.currency}` : null;
}
