import { formatPricePair } from '../../../shared/kernel/money/money';
import { presentAutoRenew } from '../../prepaid/domain/auto-renew';
import { Server } from './server';

/** The Server of servers.md, every member present; a seeded server's purchase members are null. */
export function presentServer(s: Server) {
  return {
    id: s.id,
    name: s.name,
    status: s.status,
    region: s.regionId,
    zone: s.zoneId,
    plan: s.plan,
    vcpus: s.vcpus,
    memory_gb: s.memoryGb,
    disk_gb: s.diskGb,
    image: s.image,
    ipv4: s.ipv4,
    reserved_ip: s.reservedIp ? { id: s.reservedIp.id, ip: s.reservedIp.ip } : null,
    ipv6: s.ipv6 ?? null,
    private_networks: (s.privateNetworks ?? []).map((n) => ({ network_id: n.networkId, ip: n.ip })),
    term_months: s.termMonths,
    billing: s.billing ? { currency: s.billing.currency, amount: s.billing.format() } : null,
    price_per_month: s.price ? formatPricePair(s.price) : null,
    expires_at: s.expiresAt ? s.expiresAt.toISOString() : null,
    auto_renew: presentAutoRenew(s.autoRenew),
    suspended_at: s.suspendedAt ? s.suspendedAt.toISOString() : null,
    release_at: s.releaseAt ? s.releaseAt.toISOString() : null,
    labels: { ...s.labels },
    delete_protection: s.deleteProtection,
    volume_ids: [...s.volumeIds],
    ssh_key_ids: [...s.sshKeyIds],
    created_at: s.createdAt.toISOString(),
    deleted_at: s.deletedAt ? s.deletedAt.toISOString() : null,
    deleted_reason: s.deletedReason ?? null,
  };
}
