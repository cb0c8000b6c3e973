import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { DomainError, invalidRequest, invalidState, notFound } from '../../../shared/kernel/errors/domain-error';
import { newId } from '../../../shared/kernel/ids/ids';
import { decodeCursor, encodeCursor, parseLimit } from '../../../shared/kernel/pagination/cursor';
import { auditActor } from '../../audit/application/audit-actor';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { Principal } from '../../auth/domain/principal';
import { Labels, checkLabels, parseLabelSelector, sameLabels } from '../../prepaid/domain/labels';
import {
  MAX_NETWORKS_PER_SERVER, NETWORK_NAME_PATTERN, NETWORK_NAME_RULE, Network, addressTaken, firstFreeAddress, parseIpRange, parseNetworkIp, rangeOverlaps, rangesOverlap,
} from '../domain/network';
import { Networks } from './networks.port';
import { ServerActionResult, ServerActionRunner } from './server-power.use-cases';

/** A page of GET /v1/networks holds 50 networks unless `limit` says otherwise (1 to 100). */
export const NETWORK_PAGE_LIMIT = 50;

export function checkNetworkName(value: unknown): string {
  if (typeof value !== 'string' || !NETWORK_NAME_PATTERN.test(value)) throw invalidRequest(`name must be ${NETWORK_NAME_RULE}`, { field: 'name' });
  return value;
}

/** What vm.attach_network carries in `params` (shown to nobody but the worker). */
export interface AttachParams {
  networkId: string;
  ipRange: string;
  ip: string;
}

export const attachParams = {
  write: (p: AttachParams) => ({ network_id: p.networkId, ip_range: p.ipRange, ip: p.ip }),
  read: (params: Record<string, unknown>): AttachParams => {
    const { network_id, ip_range, ip } = params;
    if (typeof network_id !== 'string' || typeof ip_range !== 'string' || typeof ip !== 'string') throw invalidState('vm.*_network operation params are malformed');
    return { networkId: network_id, ipRange: ip_range, ip };
  },
};

/**
 * POST, GET, PATCH, DELETE /v1/networks: an organization's private networks. Creating one locks
 * the organization's row (ranges of one organization in one region never overlap, also between
 * concurrent requests); changing or deleting one locks the network's row, as attaching a server
 * does (share), so a delete and an attach are judged one after the other.
 */
@Injectable()
export class NetworkUseCases {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly networks: Networks,
    private readonly audit: AuditTrail,
    private readonly clock: Clock,
  ) {}

  /**
   * 400 (name, ip_range, labels, then an unknown region naming region), 409 conflict (the range
   * overlaps another network of the organization in the region: details.existing_id; the name is
   * taken). Audited network.create.
   */
  create(principal: Principal, input: { name: unknown; region: unknown; ipRange: unknown; labels?: unknown }, ip: string | null): Promise<Network> {
    const name = checkNetworkName(input.name);
    if (typeof input.region !== 'string' || input.region === '') throw invalidRequest('region must be a region id, e.g. id-jkt', { field: 'region' });
    if (typeof input.ipRange !== 'string') throw invalidRequest('ip_range must be a private IPv4 range, e.g. 10.10.0.0/16', { field: 'ip_range' });
    const ipRange = parseIpRange(input.ipRange);
    const labels: Labels = input.labels === undefined ? {} : checkLabels(input.labels);
    const regionId = input.region;
    return this.uow.run(async () => {
      if (!(await this.networks.regionExists(regionId))) throw invalidRequest(`region ${regionId} does not exist`, { field: 'region' });
      await this.networks.lockOrganization(principal.orgId);
      const other = (await this.networks.inRegion(principal.orgId, regionId)).find((n) => rangesOverlap(n.ipRange, ipRange));
      if (other) throw rangeOverlaps(ipRange, other);
      const network: Network = { id: newId('net'), orgId: principal.orgId, name, regionId, ipRange, labels, serverIds: [], createdAt: this.clock.now() };
      await this.networks.insert(network);
      await this.audit.record({
        orgId: principal.orgId, ...auditActor(principal), action: 'network.create', targetId: network.id, ipAddress: ip,
        data: { name, region: regionId, ip_range: ipRange, labels },
      });
      return (await this.networks.find(principal.orgId, network.id))!;
    });
  }

  async get(principal: Principal, id: string): Promise<Network> {
    const network = await this.networks.find(principal.orgId, id);
    if (!network) throw notFound(`Network ${id} not found`);
    return network;
  }

  async list(principal: Principal, input: { limit?: string; cursor?: string; region?: string; label?: string | string[] }): Promise<{ networks: Network[]; nextCursor: string | null }> {
    const limit = input.limit === undefined ? NETWORK_PAGE_LIMIT : parseLimit(input.limit);
    const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor);
    const selectors = input.label === undefined ? [] : Array.isArray(input.label) ? input.label : [input.label];
    const page = await this.networks.list(principal.orgId, { limit, after, filter: { regionId: input.region, labels: selectors.map((s) => parseLabelSelector(s)) } });
    return { networks: page.items, nextCursor: page.next && encodeCursor(page.next) };
  }

  /** PATCH {name?, labels?}: 400, 404, 409 conflict (name taken). Nothing changes: no write, no audit row; else network.update with old and new. */
  update(principal: Principal, input: { id: string; name?: unknown; labels?: unknown }, ip: string | null): Promise<Network> {
    const name = input.name === undefined ? undefined : checkNetworkName(input.name);
    const labels = input.labels === undefined ? undefined : checkLabels(input.labels);
    return this.uow.run(async () => {
      const network = await this.networks.lock(principal.orgId, input.id, 'update');
      if (!network) throw notFound(`Network ${input.id} not found`);
      const changes: Record<string, { old: unknown; new: unknown }> = {};
      if (name !== undefined && name !== network.name) changes.name = { old: network.name, new: name };
      if (labels !== undefined && !sameLabels(labels, network.labels)) changes.labels = { old: network.labels, new: labels };
      if (Object.keys(changes).length === 0) return network;
      await this.networks.update(network.id, { name: changes.name ? name : undefined, labels: changes.labels ? labels : undefined });
      await this.audit.record({ orgId: principal.orgId, ...auditActor(principal), action: 'network.update', targetId: network.id, ipAddress: ip, data: { changes } });
      return (await this.networks.find(principal.orgId, network.id))!;
    });
  }

  /** DELETE: 404, 409 invalid_state while servers are attached (named in the message; detach them first). Audited network.delete. */
  delete(principal: Principal, id: string, ip: string | null): Promise<void> {
    return this.uow.run(async () => {
      const network = await this.networks.lock(principal.orgId, id, 'update');
      if (!network) throw notFound(`Network ${id} not found`);
      if ((await this.networks.attachedCount(network.id)) > 0) {
        const ids = await this.networks.attachedServerIds(network.id);
        throw invalidState(`Network ${id} has servers attached (${ids.join(', ')}); detach them first`);
      }
      await this.networks.delete(network.id);
      await this.audit.record({
        orgId: principal.orgId, ...auditActor(principal), action: 'network.delete', targetId: network.id, ipAddress: ip,
        data: { name: network.name, region: network.regionId, ip_range: network.ipRange },
      });
    });
  }
}

/**
 * POST /v1/servers/{id}/networks {network_id, ip?}: vm.attach_network (step attaching_network).
 * The server running or stopped (ServerActionRunner: 404, busy, status); then the network (404 when
 * it is not the organization's; 400 naming network_id when it is in another region), the server
 * not in it already (409 invalid_state) and in fewer than 3 networks (409 quota_exceeded,
 * details.limit); `ip` inside the range, not its network or broadcast address (400 naming ip), and
 * free (409 conflict); without it the first free address after the range's first three (409
 * conflict when the range is full). The network's row is locked while the address is chosen, and
 * the address is held at acceptance (status attaching): two servers asking for the same one at once,
 * the second is refused 409 conflict (the unique (network, ip) index is the last word).
 */
@Injectable()
export class AttachServerToNetwork {
  constructor(
    private readonly runner: ServerActionRunner,
    private readonly networks: Networks,
  ) {}

  execute(principal: Principal, input: { serverId: string; networkId: string; ip?: string }, clientIp: string | null): Promise<ServerActionResult> {
    return this.runner.run(principal, input.serverId, clientIp, {
      type: 'vm.attach_network',
      from: ['running', 'stopped'],
      callsProvider: true,
      plan: async (server) => {
        // Attaches to one network are judged one at a time (the first free address is then the first free one).
        const network = await this.networks.lock(principal.orgId, input.networkId, 'update');
        if (!network) throw notFound(`Network ${input.networkId} not found`);
        if (network.regionId !== server.regionId) {
          throw invalidRequest(`network ${network.id} is in region ${network.regionId}; server ${server.id} is in ${server.regionId}`, { field: 'network_id' });
        }
        const held = await this.networks.ofServer(server.id);
        if (held.some((a) => a.networkId === network.id)) throw invalidState(`Server ${server.id} is attached to network ${network.id} already`);
        if (held.length >= MAX_NETWORKS_PER_SERVER) {
          throw new DomainError('quota_exceeded', `Server ${server.id} is attached to ${MAX_NETWORKS_PER_SERVER} networks already; detach one first`, { limit: MAX_NETWORKS_PER_SERVER });
        }
        let ip: string;
        const taken = await this.networks.takenAddresses(network.id);
        if (input.ip !== undefined) {
          ip = parseNetworkIp(input.ip, network.ipRange);
          if (taken.has(ip)) throw addressTaken(ip, network.id);
        } else {
          const free = firstFreeAddress(network.ipRange, taken);
          if (!free) throw new DomainError('conflict', `Network ${network.id} (${network.ipRange}) has no free address left`, { field: 'network_id' });
          ip = free;
        }
        if ((await this.networks.reserve({ serverId: server.id, networkId: network.id, ip })) === 'taken') throw addressTaken(ip, network.id);
        return {
          steps: [{ name: 'attaching_network', status: 'pending' }],
          params: attachParams.write({ networkId: network.id, ipRange: network.ipRange, ip }),
          audit: { network_id: network.id, ip },
        };
      },
    });
  }
}

/**
 * POST /v1/servers/{id}/networks/{network_id}/detach: vm.detach_network (step detaching_network);
 * the server running or stopped; 404 when it is not attached to that network. The attachment is
 * `detaching` from acceptance (still shown) until the step commits.
 */
@Injectable()
export class DetachServerFromNetwork {
  constructor(
    private readonly runner: ServerActionRunner,
    private readonly networks: Networks,
  ) {}

  execute(principal: Principal, input: { serverId: string; networkId: string }, clientIp: string | null): Promise<ServerActionResult> {
    return this.runner.run(principal, input.serverId, clientIp, {
      type: 'vm.detach_network',
      from: ['running', 'stopped'],
      callsProvider: true,
      plan: async (server) => {
        const attachment = (await this.networks.ofServer(server.id)).find((a) => a.networkId === input.networkId);
        if (!attachment) throw notFound(`Server ${server.id} is not attached to network ${input.networkId}`);
        if (attachment.status !== 'attached') throw invalidState(`Server ${server.id}'s attachment to network ${input.networkId} is ${attachment.status}; wait for the sweep to settle it`);
        const network = await this.networks.find(principal.orgId, input.networkId);
        await this.networks.setStatus(server.id, input.networkId, 'detaching');
        return {
          steps: [{ name: 'detaching_network', status: 'pending' }],
          params: attachParams.write({ networkId: input.networkId, ipRange: network?.ipRange ?? '', ip: attachment.ip }),
          audit: { network_id: input.networkId, ip: attachment.ip },
        };
      },
    });
  }
}
