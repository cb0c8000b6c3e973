import { JsonObject, Operation } from '../../operations/domain/operation';

/** What the term sweep stores in vm.suspend's params: whether the server ran when its term ended. */
export type PowerBefore = 'running' | 'stopped';

export const suspendParams = {
  write(p: { suspendedAt: Date; releaseAt: Date; powerBefore?: PowerBefore; previousServerId?: string | null }): JsonObject {
    return {
      suspended_at: p.suspendedAt.toISOString(),
      release_at: p.releaseAt.toISOString(),
      ...(p.powerBefore ? { power_before: p.powerBefore } : {}),
      ...(p.previousServerId !== undefined ? { previous_server_id: p.previousServerId } : {}),
    };
  },
  read(params: JsonObject): { suspendedAt: string; releaseAt: string; powerBefore: PowerBefore; previousServerId: string | null } {
    const { suspended_at, release_at, power_before, previous_server_id } = params;
    if (typeof suspended_at !== 'string' || typeof release_at !== 'string') throw new Error('suspension parameters are malformed');
    return {
      suspendedAt: suspended_at,
      releaseAt: release_at,
      powerBefore: power_before === 'running' ? 'running' : 'stopped',
      previousServerId: typeof previous_server_id === 'string' ? previous_server_id : null,
    };
  },
};

/** The deadline `seconds` after `from`. */
export const after = (from: Date, seconds: number): Date => new Date(from.getTime() + seconds * 1000);

/** volume.suspend's result: `{volume_id, suspended_at, release_at, previous_server_id}` from its params. */
export function suspendVolumeResult(op: Operation): JsonObject {
  const p = suspendParams.read(op.params);
  return { volume_id: op.volumeId, suspended_at: p.suspendedAt, release_at: p.releaseAt, previous_server_id: p.previousServerId };
}
