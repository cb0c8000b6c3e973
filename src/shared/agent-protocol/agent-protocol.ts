import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The host agent's protocol (docs/explanation/host-agent.md), shared by the agent (agent/) and the
 * service's agent adapters: request signing and the JSON shapes on the wire. Plain TypeScript, no
 * Nest: the agent is a separate process that imports only this file from the service's tree.
 *
 * Every request to an agent carries three headers:
 *   X-Agent-Timestamp  Unix time in seconds when it was signed
 *   X-Agent-Nonce      16 to 64 characters of [A-Za-z0-9_-], new for each request
 *   X-Agent-Signature  v1=<hex HMAC-SHA256 under the shared secret of the canonical string>
 * The canonical string is the timestamp, the nonce, the method, the path with its query and the
 * hex SHA-256 of the body (empty body: of ""), joined by "\n". An agent refuses (401) a missing or
 * wrong signature, a timestamp more than AGENT_SIGNATURE_WINDOW_S away from its clock, and a nonce
 * it has seen within the window (so a captured request cannot be replayed).
 */
export const AGENT_SIGNATURE_WINDOW_S = 30;
export const TIMESTAMP_HEADER = 'x-agent-timestamp';
export const NONCE_HEADER = 'x-agent-nonce';
export const SIGNATURE_HEADER = 'x-agent-signature';

const NONCE = /^[A-Za-z0-9_-]{16,64}$/;

const sha256Hex = (body: string | Buffer): string => createHash('sha256').update(body).digest('hex');

function canonical(timestamp: string, nonce: string, method: string, pathWithQuery: string, body: string | Buffer): string {
  return [timestamp, nonce, method.toUpperCase(), pathWithQuery, sha256Hex(body)].join('\n');
}

/** The three headers of a signed request. */
export function signAgentRequest(secret: string, method: string, pathWithQuery: string, body: string, nowS = Math.floor(Date.now() / 1000)): Record<string, string> {
  const timestamp = String(nowS);
  const nonce = randomBytes(18).toString('base64url');
  const mac = createHmac('sha256', secret).update(canonical(timestamp, nonce, method, pathWithQuery, body)).digest('hex');
  return { [TIMESTAMP_HEADER]: timestamp, [NONCE_HEADER]: nonce, [SIGNATURE_HEADER]: `v1=${mac}` };
}

/**
 * Checks a request's signature (the agent's side). `seen` remembers the nonces of the window: a
 * nonce already there is a replay. Returns null when the request is genuine, else why not (never
 * echoing the secret or the expected signature).
 */
export function verifyAgentRequest(
  secret: string,
  input: { method: string; pathWithQuery: string; body: Buffer; headers: Record<string, string | string[] | undefined> },
  seen: NonceCache,
  nowS = Math.floor(Date.now() / 1000),
): string | null {
  const header = (name: string): string | undefined => {
    const v = input.headers[name];
    return Array.isArray(v) ? v[0] : v;
  };
  const timestamp = header(TIMESTAMP_HEADER);
  const nonce = header(NONCE_HEADER);
  const signature = header(SIGNATURE_HEADER);
  if (!timestamp || !nonce || !signature) return 'the request is not signed';
  if (!/^\d{1,12}$/.test(timestamp) || Math.abs(Number(timestamp) - nowS) > AGENT_SIGNATURE_WINDOW_S) return 'the signature timestamp is outside the window';
  if (!NONCE.test(nonce)) return 'the nonce is malformed';
  if (!signature.startsWith('v1=')) return 'the signature is malformed';
  const expected = createHmac('sha256', secret).update(canonical(timestamp, nonce, input.method, input.pathWithQuery, input.body)).digest();
  const given = Buffer.from(signature.slice(3), 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'the signature does not match';
  if (!seen.remember(nonce, Number(timestamp))) return 'the nonce was used already';
  return null;
}

/** The nonces seen within the signature window (a replay of one is refused). */
export class NonceCache {
  private readonly nonces = new Map<string, number>();

  /** False when the nonce was seen already; else remembers it until it leaves the window. */
  remember(nonce: string, timestampS: number, nowS = Math.floor(Date.now() / 1000)): boolean {
    if (this.nonces.size > 1000) for (const [n, t] of this.nonces) if (t < nowS - 2 * AGENT_SIGNATURE_WINDOW_S) this.nonces.delete(n);
    if (this.nonces.has(nonce)) return false;
    this.nonces.set(nonce, timestampS);
    return true;
  }
}

/** A firewall rule as the agent applies it: the canonical form the API computes (servers.md "firewall rules"). */
export interface AgentFirewallRule {
  direction: 'in' | 'out';
  protocol: 'tcp' | 'udp' | 'icmp';
  /** "N" or "N-M"; null for icmp. */
  port: string | null;
  /** CIDRs the rule allows from (in) or to (out). */
  addresses: string[];
}

/** An instance on the wire (snake_case, as the service's API). */
export interface AgentInstance {
  instance_id: string;
  server_id: string;
  zone_id: string;
  vcpus: number;
  memory_gb: number;
  disk_gb: number;
  image: string;
  hostname: string;
  ipv4: string;
  power: 'running' | 'stopped';
}

export interface AgentDisk {
  disk_id: string;
  volume_id: string;
  zone_id: string;
  size_gb: number;
  server_id: string | null;
  mount_path: string | null;
  mounted: boolean;
}

/** GET /v1/health: who the agent is, what it can serve and what it has left. */
export interface AgentHealth {
  agent: string;
  images: { id: string; status: 'ready' | 'building' | 'unavailable'; reason?: string }[];
  capacity: { vcpus: number; memory_gb: number; vcpus_used: number; memory_gb_used: number; instances: number; disks: number };
}

/** An agent's refusal: `{error: {code, message}}` with 400 (invalid_request), 401, 404 (not_found) or 409 (invalid_state, out_of_stock). */
export interface AgentErrorBody {
  error: { code: string; message: string };
}

/** The path segment of an id the agent accepts (the service's prefixed ids). */
export const AGENT_ID = /^[A-Za-z0-9_-]{1,64}$/;
