import { Money, isCurrency } from '../../../shared/kernel/money/money';
import { JsonObject } from '../../operations/domain/operation';
import { TermMonths, isTerm } from '../../prepaid/domain/term';

/**
 * What the accepting request stores in `params` of vm.* operations and the executors read back.
 * Never shown to callers. `user_data` stays in vm.create's params only until creating_instance
 * succeeds or the operation ends (then the key is removed from the stored params). A malformed
 * params object is reported without its content (it may hold user_data).
 */
export interface CreateServerParams {
  zoneId: string;
  planId: string;
  vcpus: number;
  memoryGb: number;
  diskGb: number;
  image: string;
  termMonths: TermMonths;
  amount: Money;
  /** The SSH keys' public keys, copied at acceptance (a key deleted meanwhile is still injected). */
  sshKeys: { id: string; fingerprint: string; publicKey: string }[];
  userData: string | null;
}

const malformed = (type: string): never => {
  throw new Error(`${type} parameters are malformed`);
};
const str = (v: unknown): v is string => typeof v === 'string' && v.length > 0;
const int = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) > 0;

export const createServerParams = {
  write(p: CreateServerParams): JsonObject {
    return {
      zone_id: p.zoneId,
      plan_id: p.planId,
      vcpus: p.vcpus,
      memory_gb: p.memoryGb,
      disk_gb: p.diskGb,
      image: p.image,
      term_months: p.termMonths,
      currency: p.amount.currency,
      amount: p.amount.format(),
      ssh_keys: p.sshKeys.map((k) => ({ id: k.id, fingerprint: k.fingerprint, public_key: k.publicKey })),
      user_data: p.userData,
    };
  },
  read(params: JsonObject): CreateServerParams {
    const { zone_id, plan_id, vcpus, memory_gb, disk_gb, image, term_months, currency, amount, ssh_keys, user_data } = params;
    if (
      !str(zone_id) || !str(plan_id) || !int(vcpus) || !int(memory_gb) || !int(disk_gb) || !str(image) || !isTerm(term_months) ||
      !isCurrency(currency) || typeof amount !== 'string' || !Array.isArray(ssh_keys)
    ) {
      return malformed('vm.create');
    }
    const keys = (ssh_keys as unknown[]).map((k) => {
      const key = k as { id?: unknown; fingerprint?: unknown; public_key?: unknown };
      if (!str(key.id) || !str(key.fingerprint) || !str(key.public_key)) return malformed('vm.create');
      return { id: key.id, fingerprint: key.fingerprint, publicKey: key.public_key };
    });
    return {
      zoneId: zone_id,
      planId: plan_id,
      vcpus: vcpus as number,
      memoryGb: memory_gb as number,
      diskGb: disk_gb as number,
      image,
      termMonths: term_months,
      amount: Money.parse(amount, currency),
      sshKeys: keys,
      // Absent once creating_instance has succeeded (removed from the stored params).
      userData: typeof user_data === 'string' ? user_data : null,
    };
  },
};

/** vm.stop remembers `force`, vm.reboot `hard`. */
export const powerParams = {
  write(p: { flag: boolean }): JsonObject {
    return { flag: p.flag };
  },
  read(params: JsonObject): boolean {
    return params.flag === true;
  },
};
