import { Db } from '../../../shared/database/transaction';
import { ComputeProvider, ComputeUnavailable, ProviderAddresses } from '../../servers/application/compute-provider.port';
import { Finding, InvariantCheck } from '../application/invariant-checks.port';

/**
 * Every live server has an IPv6 address inside its region's prefix, none held by two live servers
 * (the unique index servers_ipv6_live_key holds it; this checks the data as it is).
 */
export class ServerIpv6Check implements InvariantCheck {
  readonly name = 'servers.ipv6_unique_in_region_prefix';
  readonly description = "Every live server has an IPv6 address inside its region's prefix, and no two live servers share one";

  constructor(private readonly db: Db) {}

  async findViolations(): Promise<Finding[]> {
    const rows = await this.db.query<{ id: string; org_id: string; ipv6: string | null; prefix: string; shared: number }>(
      `SELECT s.id, s.org_id, s.ipv6, r.ipv6_prefix::text AS prefix,
              (SELECT count(*)::int FROM servers o WHERE o.deleted_at IS NULL AND o.ipv6 = s.ipv6 AND o.id <> s.id) AS shared
         FROM servers s JOIN regions r ON r.id = s.region_id
        WHERE s.deleted_at IS NULL
          AND (s.ipv6 IS NULL OR NOT (s.ipv6::inet << r.ipv6_prefix)
               OR EXISTS (SELECT 1 FROM servers o WHERE o.deleted_at IS NULL AND o.ipv6 = s.ipv6 AND o.id <> s.id))
        ORDER BY s.id`,
    );
    return rows.map((r) => ({
      subject: r.id,
      message: r.ipv6 === null ? 'live server has no IPv6 address' : r.shared > 0 ? `IPv6 ${r.ipv6} is held by ${r.shared} other live server(s)` : `IPv6 ${r.ipv6} is outside its region's prefix ${r.prefix}`,
      details: { org_id: r.org_id, ipv6: r.ipv6, prefix: r.prefix },
    }));
  }
}

/**
 * Every attachment is of a server and a network of one organization in one region, at an address
 * inside the network's range; a server is in at most 3 networks.
 */
export class NetworkAttachmentsCheck implements InvariantCheck {
  readonly name = 'networks.attachments_valid';
  readonly description = "Every private network attachment joins a server and a network of one organization and region, at an address inside the network's range; at most 3 per server";

  constructor(private readonly db: Db) {}

  async findViolations(): Promise<Finding[]> {
    const rows = await this.db.query<{ server_id: string; network_id: string; ip: string; reason: string }>(
      `SELECT sn.server_id, sn.network_id, host(sn.ip) AS ip,
              CASE WHEN s.org_id <> n.org_id THEN 'server and network are of different organizations'
                   WHEN s.region_id <> n.region_id THEN 'server and network are in different regions'
                   WHEN NOT (sn.ip << n.ip_range) THEN 'the address is outside the network''s range'
                   ELSE 'the server is in more than 3 networks' END AS reason
         FROM server_networks sn JOIN servers s ON s.id = sn.server_id JOIN networks n ON n.id = sn.network_id
        WHERE s.org_id <> n.org_id OR s.region_id <> n.region_id OR NOT (sn.ip << n.ip_range)
           OR (SELECT count(*) FROM server_networks o WHERE o.server_id = sn.server_id) > 3
        ORDER BY sn.server_id, sn.network_id`,
    );
    return rows.map((r) => ({ subject: r.server_id, message: `attachment to ${r.network_id} at ${r.ip}: ${r.reason}`, details: { network_id: r.network_id, ip: r.ip } }));
  }
}

/**
 * The provider's truth about addresses is the database's: for every live server with no vm.*
 * operation in flight, each attachment `attached` in the database is at the provider with the
 * same address, each attachment at the provider is in the database, and an IPv6 address the
 * provider routes to it is the server's.
 */
export class ProviderAddressesCheck implements InvariantCheck {
  readonly name = 'provider.addresses_match_servers';
  readonly description =
    'Every settled live server has at the compute provider exactly its attached private networks, at the same addresses, and the IPv6 address the provider routes to it (if any) is its own';

  constructor(
    private readonly db: Db,
    private readonly compute: ComputeProvider,
  ) {}

  async findViolations(): Promise<Finding[]> {
    let held: ProviderAddresses[];
    try {
      held = await this.compute.listAddresses();
    } catch (err) {
      if (!(err instanceof ComputeUnavailable)) throw err;
      return [{ subject: 'compute_provider', message: `the compute provider could not list its addresses: ${err.message}`, details: {} }];
    }
    const atProvider = new Map(held.map((a) => [a.serverId, a]));
    const servers = await this.db.query<{ id: string; ipv6: string | null; networks: { network_id: string; ip: string; status: string }[] }>(
      `SELECT s.id, s.ipv6,
              COALESCE((SELECT json_agg(json_build_object('network_id', sn.network_id, 'ip', host(sn.ip), 'status', sn.status))
                          FROM server_networks sn WHERE sn.server_id = s.id), '[]'::json) AS networks
         FROM servers s
        WHERE s.deleted_at IS NULL AND s.status <> 'creating'
          AND NOT EXISTS (SELECT 1 FROM operations o WHERE o.vm_id = s.id AND o.type LIKE 'vm.%' AND o.status IN ('pending', 'running'))
          AND (s.id = ANY($1::text[]) OR EXISTS (SELECT 1 FROM server_networks sn WHERE sn.server_id = s.id))
        ORDER BY s.id`,
      [held.map((a) => a.serverId)],
    );
    const found: Finding[] = [];
    for (const s of servers) {
      const provider = atProvider.get(s.id);
      if (provider?.ipv6 && provider.ipv6 !== s.ipv6) {
        found.push({ subject: s.id, message: `server has IPv6 ${s.ipv6 ?? 'none'} but the provider routes ${provider.ipv6} to it`, details: { ipv6: s.ipv6, provider_ipv6: provider.ipv6 } });
      }
      const there = new Map((provider?.networks ?? []).map((n) => [n.networkId, n.ip]));
      for (const n of s.networks) {
        const ip = there.get(n.network_id);
        if (n.status === 'attached' && ip !== n.ip) {
          found.push({
            subject: s.id,
            message: ip === undefined ? `attached to ${n.network_id} at ${n.ip} but not at the provider` : `attached to ${n.network_id} at ${n.ip} but at ${ip} at the provider`,
            details: { network_id: n.network_id, ip: n.ip, provider_ip: ip ?? null },
          });
        }
        there.delete(n.network_id);
      }
      for (const [networkId, ip] of there) {
        found.push({ subject: s.id, message: `the provider holds it in ${networkId} at ${ip} but the database does not`, details: { network_id: networkId, ip: null, provider_ip: ip } });
      }
    }
    return found;
  }
}
