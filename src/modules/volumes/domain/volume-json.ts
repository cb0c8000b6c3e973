import { formatPricePair } from '../../../shared/kernel/money/money';
import { presentAutoRenew } from '../../prepaid/domain/auto-renew';
import { Volume } from './volume';

/** The Volume of interface.md 2.1, every field present; nulls for a detached disk. */
export function presentVolume(v: Volume) {
  return {
    id: v.id,
    name: v.name,
    status: v.status,
    type: v.type,
    region: v.regionId,
    zone: v.zoneId,
    size_gb: v.sizeGb,
    server: v.server ? { id: v.server.id, name: v.server.name } : null,
    mount_path: v.mountPath,
    mounted: v.mounted,
    term_months: v.termMonths,
    billing: { currency: v.billing.currency, amount: v.billing.format() },
    price_per_gb_month: formatPricePair(v.price),
    expires_at: v.expiresAt.toISOString(),
    auto_renew: presentAutoRenew(v.autoRenew),
    suspended_at: v.suspendedAt ? v.suspendedAt.toISOString() : null,
    release_at: v.releaseAt ? v.releaseAt.toISOString() : null,
    previous_server_id: v.previousServerId ?? null,
    note: v.note,
    labels: { ...v.labels },
    delete_protection: v.deleteProtection,
    created_at: v.createdAt.toISOString(),
    deleted_at: v.deletedAt ? v.deletedAt.toISOString() : null,
    deleted_reason: v.deletedReason ?? null,
  };
}

export type VolumeJson = ReturnType<typeof presentVolume>;
