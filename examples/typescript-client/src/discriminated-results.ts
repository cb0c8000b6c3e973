/**
 * A second generator, one that reads the document's `discriminator` (as openapi-generator's Go,
 * Java and Python clients must to deserialize a oneOf): swagger-typescript-api builds `Operation`
 * from the discriminator's mapping, one `{type: '<value>'} & <Variant>` per entry. Checking the
 * type is then enough for `result` to have that type's schema, without a cast. Type-checked with
 * `--strict` by `npm run openapi:client`, after swagger-typescript-api writes
 * ./generated/swagger-typescript-api.ts.
 */
import type { Operation, Quote, ServerQuote, VmCreateResult, VolumeCreateResult } from './generated/swagger-typescript-api';

/** The address of a server once its purchase succeeded. */
export function addressOf(operation: Operation): string | null {
  if (operation.type !== 'vm.create') return null;
  const result: VmCreateResult | null = operation.result;
  return result?.ipv4 ?? null;
}

/** The disk bought, once a volume.create operation succeeded. */
export function volumeOf(operation: Operation): string | null {
  if (operation.type !== 'volume.create') return null;
  const result: VolumeCreateResult | null = operation.result;
  return result?.volume_id ?? null;
}

/** A quote told apart by `kind` (Quote's discriminator). */
export function planOf(quote: Quote): string | null {
  if (quote.kind !== 'server') return null;
  const server: ServerQuote = quote;
  return server.plan;
}
