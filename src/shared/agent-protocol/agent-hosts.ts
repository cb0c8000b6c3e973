import { Inject, Injectable } from '@nestjs/common';
import { Settings } from '../config/settings';
import { Db } from '../database/transaction';
import { UnitOfWork, WorkerUnitOfWork } from '../database/unit-of-work';
import { DomainError, ErrorCode, invalidState } from '../kernel/errors/domain-error';
import { AgentErrorBody, AgentHealth, signAgentRequest } from './agent-protocol';

/** An agent could not be reached, timed out, refused the signature or failed: the adapters' "unavailable" (retried, counted by the circuit). */
export class AgentUnreachable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AgentUnreachable';
  }
}

/** Extra time a call that waits for a guest (ACPI shutdown or reboot: 120 s) gets beyond AGENT_TIMEOUT_MS. */
export const GUEST_GRACE_MS = 150_000;

const FINAL: Record<string, ErrorCode> = { invalid_state: 'invalid_state', out_of_stock: 'out_of_stock', invalid_request: 'invalid_state', not_found: 'invalid_state' };

/**
 * The host agents of AGENT_URLS (docs/explanation/host-agent.md), as the compute and storage
 * adapters reach them: signed requests, answers sorted into a value, a final refusal (DomainError)
 * or "unreachable"; which agent holds a server or a disk (agent_placements, written once before
 * the first creating call, so a retried call goes to the same host); the choice of a host by free
 * capacity. Placement reads and writes are short transactions of their own on the worker's pool.
 */
@Injectable()
export class AgentHosts {
  constructor(
    private readonly settings: Settings,
    private readonly db: Db,
    @Inject(WorkerUnitOfWork) private readonly uow: UnitOfWork,
  ) {}

  get urls(): string[] {
    return this.settings.agentUrls;
  }

  /** One signed call; 404 on a read answers undefined. */
  async call<T>(agent: string, method: 'GET' | 'PUT' | 'POST' | 'DELETE', path: string, body?: object, extraMs = 0): Promise<T | undefined> {
    if (!this.urls.includes(agent)) throw new AgentUnreachable(`host agent ${agent} is not in AGENT_URLS`);
    const text = body === undefined ? '' : JSON.stringify(body);
    let res: Response;
    try {
      res = await fetch(`${agent}${path}`, {
        method,
        headers: { ...signAgentRequest(this.settings.agentSecret ?? '', method, path, text), ...(text ? { 'content-type': 'application/json' } : {}) },
        body: text || undefined,
        signal: AbortSignal.timeout(this.settings.agentTimeoutMs + extraMs),
      });
    } catch (err) {
      throw new AgentUnreachable(`host agent ${agent} could not be reached: ${err instanceof Error ? err.message : String(err)}`);
    }
    const raw = await res.text().catch(() => '');
    let parsed: unknown;
    try {
      parsed = raw ? JSON.parse(raw) : undefined;
    } catch {
      parsed = undefined;
    }
    if (res.ok) return parsed as T | undefined;
    const error = (parsed as AgentErrorBody | undefined)?.error;
    if (res.status === 404 && method === 'GET') return undefined;
    if ((res.status === 400 || res.status === 404 || res.status === 409) && error && FINAL[error.code]) {
      throw new DomainError(FINAL[error.code], error.message);
    }
    throw new AgentUnreachable(`host agent ${agent} answered ${res.status}${error ? `: ${error.message}` : ''}`);
  }

  /** Runs an adapter's call: an agent unreachable becomes the adapter's own "unavailable" error (ComputeUnavailable, ProviderUnavailable). */
  async guard<T>(unavailable: new (message: string) => Error, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      if (err instanceof AgentUnreachable) throw new unavailable(err.message);
      throw err;
    }
  }

  /** The agent holding the resource; none (never placed, so never made): invalid_state saying `what` the provider does not have. */
  async holder(resourceId: string, what: string): Promise<string> {
    const agent = await this.placementOf(resourceId);
    if (!agent) throw invalidState(`The ${what} provider has no ${resourceId.startsWith('vol') ? 'disk for volume' : 'instance for server'} ${resourceId}`);
    return agent;
  }

  /** The agent that holds the resource, or undefined when none was chosen for it. */
  async placementOf(resourceId: string): Promise<string | undefined> {
    const row = await this.uow.run(() => this.db.one<{ agent: string }>('SELECT agent FROM agent_placements WHERE resource_id = $1', [resourceId], 'agent_placements_find'));
    return row?.agent;
  }

  /** The resource's agent: the one recorded, else `choose()`'s, recorded now (of two racing choices the first written wins). */
  async place(resourceId: string, choose: () => Promise<string>): Promise<string> {
    const known = await this.placementOf(resourceId);
    if (known) return known;
    const chosen = await choose();
    await this.uow.run(() => this.db.query('INSERT INTO agent_placements (resource_id, agent) VALUES ($1, $2) ON CONFLICT (resource_id) DO NOTHING', [resourceId, chosen]));
    return (await this.placementOf(resourceId)) ?? chosen;
  }

  /** Each agent's health, or the reason it could not be read. */
  async healths(): Promise<{ agent: string; health?: AgentHealth; error?: string }[]> {
    return Promise.all(
      this.urls.map(async (agent) => {
        try {
          return { agent, health: await this.call<AgentHealth>(agent, 'GET', '/v1/health') };
        } catch (err) {
          return { agent, error: err instanceof Error ? err.message : String(err) };
        }
      }),
    );
  }

  /**
   * The host for a new server: among the agents that answer and have the image ready, the one with
   * the most vCPUs free (then memory) that fits the plan. None fits: out_of_stock (final); none
   * answers: unreachable (retried).
   */
  async chooseForInstance(vcpus: number, memoryGb: number, image: string): Promise<string> {
    const all = await this.healths();
    const up = all.filter((h) => h.health);
    if (up.length === 0) throw new AgentUnreachable(`no host agent answered: ${all.map((h) => h.error).join('; ')}`);
    const fits = up
      .map((h) => ({ agent: h.agent, c: h.health!.capacity, ready: h.health!.images.some((i) => i.id === image && i.status === 'ready') }))
      .filter((h) => h.ready && h.c.vcpus - h.c.vcpus_used >= vcpus && h.c.memory_gb - h.c.memory_gb_used >= memoryGb)
      .sort((a, b) => b.c.vcpus - b.c.vcpus_used - (a.c.vcpus - a.c.vcpus_used) || b.c.memory_gb - b.c.memory_gb_used - (a.c.memory_gb - a.c.memory_gb_used));
    if (fits.length) return fits[0].agent;
    if (up.some((h) => h.health!.images.some((i) => i.id === image && i.status === 'building'))) {
      throw new AgentUnreachable(`image ${image} is still being built on the host agents`);
    }
    throw new DomainError('out_of_stock', `No host agent has ${vcpus} vCPUs and ${memoryGb} GB free with image ${image}`);
  }

  /** The host for a disk bought without a server: the answering agent holding the fewest disks. */
  async chooseForDisk(): Promise<string> {
    const up = (await this.healths()).filter((h) => h.health);
    if (up.length === 0) throw new AgentUnreachable('no host agent answered');
    return up.sort((a, b) => a.health!.capacity.disks - b.health!.capacity.disks)[0].agent;
  }

  /**
   * A listing across every agent, ordered by `key` and paged as one provider's would be: each
   * agent's page after `after`, merged, the first `limit` kept. Any agent unreachable: unreachable
   * (a listing must be whole: verify and the orphan sweeps compare it with the database).
   */
  async listAll<T>(path: string, member: string, key: (t: T) => string, page?: { after?: string; limit: number }): Promise<T[]> {
    const query = `after=${encodeURIComponent(page?.after ?? '')}${page ? `&limit=${page.limit}` : ''}`;
    const lists = await Promise.all(this.urls.map(async (agent) => ((await this.call<Record<string, T[]>>(agent, 'GET', `${path}?${query}`)) ?? {})[member] ?? []));
    const merged = lists.flat().sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
    return page ? merged.slice(0, page.limit) : merged;
  }
}
