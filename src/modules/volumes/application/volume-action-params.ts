import { isCurrency, Money } from '../../../shared/kernel/money/money';
import { JsonObject } from '../../operations/domain/operation';
import { isTerm, TermMonths } from '../../prepaid/domain/term';

/**
 * What the accepting request stores in `params` of volume.create, volume.attach, volume.detach
 * and volume.delete operations, and the worker's executors read back. Never shown to callers.
 *
 * Steps (lifecycle.md), in order:
 * - volume.create: payment_reserved (succeeded at acceptance), creating_volume (or, restoring a
 *   snapshot, restoring), attaching (only with a server), ready
 * - volume.attach: attaching, mounting
 * - volume.detach: unmounting, detaching
 * - volume.delete: unmounting and detaching (only when attached), deleting
 */
export interface PurchaseParams {
  sizeGb: number;
  type: string;
  zoneId: string;
  serverId: string | null;
  mountPath: string | null;
  termMonths: TermMonths;
  /** The purchase's price, captured from the hold at success. */
  amount: Money;
  /** The snapshot the disk is restored from (its `restoring` step), or null. */
  snapshotId?: string | null;
}

export interface AttachParams {
  serverId: string;
  mountPath: string;
}

const fail = (type: string, params: JsonObject): never => {
  throw new Error(`${type} parameters are malformed: ${JSON.stringify(params)}`);
};

const str = (v: unknown): v is string => typeof v === 'string' && v.length > 0;
const strOrNull = (v: unknown): v is string | null => v === null || str(v);

export const purchaseParams = {
  write(p: PurchaseParams): JsonObject {
    return {
      size_gb: p.sizeGb,
      type: p.type,
      zone_id: p.zoneId,
      server_id: p.serverId,
      mount_path: p.mountPath,
      term_months: p.termMonths,
      currency: p.amount.currency,
      amount: p.amount.format(),
      ...(p.snapshotId ? { snapshot_id: p.snapshotId } : {}),
    };
  },
  read(params: JsonObject): PurchaseParams {
    const { size_gb, type, zone_id, server_id, mount_path, term_months, currency, amount, snapshot_id } = params;
    if (
      !Number.isSafeInteger(size_gb) || !str(type) || !str(zone_id) || !strOrNull(server_id) || !strOrNull(mount_path) ||
      !isTerm(term_months) || !isCurrency(currency) || typeof amount !== 'string'
    ) {
      return fail('volume.create', params);
    }
    return {
      sizeGb: size_gb as number,
      type,
      zoneId: zone_id,
      serverId: server_id,
      mountPath: mount_path,
      termMonths: term_months,
      amount: Money.parse(amount, currency),
      snapshotId: str(snapshot_id) ? snapshot_id : null,
    };
  },
};

export const attachParams = {
  write(p: AttachParams): JsonObject {
    return { server_id: p.serverId, mount_path: p.mountPath };
  },
  read(params: JsonObject): AttachParams {
    const { server_id, mount_path } = params;
    if (!str(server_id) || !str(mount_path)) return fail('volume.attach', params);
    return { serverId: server_id, mountPath: mount_path };
  },
};

/** volume.delete remembers whether the volume was attached when the delete was accepted. */
export const deleteParams = {
  write(p: { detach: boolean }): JsonObject {
    return { detach: p.detach };
  },
  read(params: JsonObject): { detach: boolean } {
    if (typeof params.detach !== 'boolean') return fail('volume.delete', params);
    return { detach: params.detach };
  },
};

/**
 * `result` of a succeeded volume.attach, volume.detach or volume.delete (the OpenAPI schema
 * VolumeActionResult): the volume and the status it reached (attached, available, deleted).
 * volume.create's is {volume_id, size_gb, expires_at, charged: {currency, amount}} (lifecycle.md).
 */
export function volumeActionResult(volumeId: string, status: 'attached' | 'available' | 'deleted'): JsonObject {
  return { volume_id: volumeId, status };
}

/** volume.resize: the new size, what it adds, and the charge (captured from the hold at success). */
export interface ResizeParams {
  sizeGb: number;
  addedGb: number;
  amount: Money;
}

export const resizeParams = {
  write(p: ResizeParams): JsonObject {
    return { size_gb: p.sizeGb, added_gb: p.addedGb, currency: p.amount.currency, amount: p.amount.format() };
  },
  read(params: JsonObject): ResizeParams {
    const { size_gb, added_gb, currency, amount } = params;
    if (!Number.isSafeInteger(size_gb) || !Number.isSafeInteger(added_gb) || !isCurrency(currency) || typeof amount !== 'string') {
      return fail('volume.resize', params);
    }
    return { sizeGb: size_gb as number, addedGb: added_gb as number, amount: Money.parse(amount, currency) };
  },
};
