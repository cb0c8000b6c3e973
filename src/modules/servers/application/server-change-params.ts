import { isCurrency, Money, PricePair, pricePairOfMinor } from '../../../shared/kernel/money/money';
import { JsonObject } from '../../operations/domain/operation';

/**
 * What vm.resize and vm.rebuild carry in `params` (never shown to callers). vm.rebuild's
 * user_data is removed once the rebuilding step has succeeded, or when the operation ends.
 */
export interface ResizeServerParams {
  planId: string;
  vcpus: number;
  memoryGb: number;
  diskGb: number;
  /** The new plan's current price: the server's frozen price once the change succeeds. */
  price: PricePair;
  addedVcpus: number;
  amount: Money;
}

export interface RebuildServerParams {
  image: string;
  sshKeys: { id: string; publicKey: string }[];
  userData: string | null;
}

const fail = (type: string, params: JsonObject): never => {
  throw new Error(`${type} parameters are malformed: ${JSON.stringify(params)}`);
};
const int = (v: unknown): v is number => Number.isSafeInteger(v);
const str = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

export const resizeServerParams = {
  write(p: ResizeServerParams): JsonObject {
    return {
      plan_id: p.planId, vcpus: p.vcpus, memory_gb: p.memoryGb, disk_gb: p.diskGb,
      price_usd_minor: p.price.USD.minor.toString(), price_idr_minor: p.price.IDR.minor.toString(),
      added_vcpus: p.addedVcpus, currency: p.amount.currency, amount: p.amount.format(),
    };
  },
  read(params: JsonObject): ResizeServerParams {
    const { plan_id, vcpus, memory_gb, disk_gb, price_usd_minor, price_idr_minor, added_vcpus, currency, amount } = params;
    if (!str(plan_id) || !int(vcpus) || !int(memory_gb) || !int(disk_gb) || !str(price_usd_minor) || !str(price_idr_minor) || !int(added_vcpus) ||
      !isCurrency(currency) || typeof amount !== 'string') {
      return fail('vm.resize', params);
    }
    return {
      planId: plan_id, vcpus, memoryGb: memory_gb, diskGb: disk_gb, price: pricePairOfMinor(price_usd_minor, price_idr_minor),
      addedVcpus: added_vcpus, amount: Money.parse(amount, currency),
    };
  },
};

export const rebuildServerParams = {
  write(p: RebuildServerParams): JsonObject {
    return { image: p.image, ssh_keys: p.sshKeys.map((k) => ({ id: k.id, public_key: k.publicKey })), user_data: p.userData };
  },
  read(params: JsonObject): RebuildServerParams {
    const { image, ssh_keys, user_data } = params;
    if (!str(image) || !Array.isArray(ssh_keys)) return fail('vm.rebuild', params);
    const keys = (ssh_keys as unknown[]).map((k) => {
      const { id, public_key } = (k ?? {}) as Record<string, unknown>;
      if (!str(id) || !str(public_key)) return fail('vm.rebuild', params);
      return { id, publicKey: public_key };
    });
    return { image, sshKeys: keys, userData: typeof user_data === 'string' ? user_data : null };
  },
};
