/**
 * What the worker learned from an external provider about a resource before it gives anything
 * back for a failed operation (the volume's disk, a server's instance): the provider's answer,
 * or that it could not be read (the provider still unreachable).
 *
 * A provider call whose answer was lost may have taken effect. So a failed operation is never
 * concluded as "nothing happened": before its executor's `failed` gives anything back, the
 * engine asks the executor to `observe` the resource (a read, outside any transaction), and
 * `failed` decides from what the provider holds, not from what the steps assumed. When the truth
 * cannot be read, `failed` must leave the resource as something a reconciliation sweep settles
 * later (never as if the call had not happened).
 */
export type ProviderTruth<T> = { known: true; value: T } | { known: false; reason: string };

/** Reads the provider's truth with `read`; any failure to read is "unknown", never thrown. */
export async function readProviderTruth<T>(read: () => Promise<T>): Promise<ProviderTruth<T>> {
  try {
    return { known: true, value: await read() };
  } catch (err) {
    return { known: false, reason: err instanceof Error ? err.message : String(err) };
  }
}
