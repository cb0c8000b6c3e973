import { cpus, hostname, totalmem } from 'node:os';
import { isIPv4 } from 'node:net';
import { join } from 'node:path';

/** The agent's settings (docs/reference/host-agent.md), read once from the environment. */
export interface AgentConfig {
  /** The shared secret every request is signed with (at least 32 characters). */
  secret: string;
  host: string;
  port: number;
  /** The name the agent reports (GET /v1/health). */
  name: string;
  /** Records, the call journal, containers (its own LXC path) and disk files. */
  stateDir: string;
  /** Built images (and debootstrap's package cache), kept between runs. */
  imageCacheDir: string;
  /** The Debian mirror debootstrap fetches from. */
  mirror: string;
  /** The host bridge the servers' interfaces join, and its network (the agent takes the first address). */
  bridge: string;
  subnet: { base: number[]; prefix: number };
  /** Names of host objects start with this (containers, interfaces). */
  prefix: string;
  vcpus: number;
  memoryGb: number;
  /** The console's TLS listener and the public base of its wss:// URLs. */
  consolePort: number;
  consolePublicHost: string;
  tlsCert: string | undefined;
  tlsKey: string | undefined;
  /** Whether to build the image at start when it is missing (else at the first creation). */
  buildOnStart: boolean;
}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) throw new Error(`Setting ${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  return Number(raw);
}

/** The URI of Debian's main archive in the host's APT sources, else deb.debian.org. */
export function defaultMirror(sources: string): string {
  for (const m of sources.matchAll(/^\s*(?:URIs:\s*(\S+)|deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+bookworm\s)/gm)) {
    const uri = m[1] ?? m[2];
    if (uri && !uri.includes('security') && /^https?:\/\//.test(uri)) return uri;
  }
  return 'http://deb.debian.org/debian';
}

export function loadAgentConfig(env: NodeJS.ProcessEnv, aptSources = ''): AgentConfig {
  const secret = env.AGENT_SECRET ?? '';
  if (secret.length < 32) throw new Error('Setting AGENT_SECRET must be set to at least 32 characters (the same value as the service\'s AGENT_SECRET)');
  const subnetRaw = env.AGENT_SUBNET || '198.18.0.0/24';
  const m = /^(\d+\.\d+\.\d+\.\d+)\/(\d+)$/.exec(subnetRaw);
  if (!m || !isIPv4(m[1]) || Number(m[2]) < 16 || Number(m[2]) > 29) throw new Error(`Setting AGENT_SUBNET must be an IPv4 network from /16 to /29 such as 198.18.0.0/24, got "${subnetRaw}"`);
  const bridge = env.AGENT_BRIDGE || 'cdsbr0';
  if (!/^[a-z][a-z0-9]{1,11}$/.test(bridge)) throw new Error(`Setting AGENT_BRIDGE must be 2 to 12 lowercase letters and digits, got "${bridge}"`);
  const prefix = env.AGENT_PREFIX || 'cds';
  if (!/^[a-z][a-z0-9]{1,5}$/.test(prefix)) throw new Error(`Setting AGENT_PREFIX must be 2 to 6 lowercase letters and digits, got "${prefix}"`);
  const stateDir = env.AGENT_STATE_DIR || '/var/lib/cds-agent';
  return {
    secret,
    host: env.AGENT_HOST || '127.0.0.1',
    port: int(env, 'AGENT_PORT', 7070, 0, 65535),
    name: env.AGENT_NAME || hostname(),
    stateDir,
    imageCacheDir: env.AGENT_IMAGE_CACHE_DIR || '/var/cache/cds-agent',
    mirror: env.AGENT_DEBIAN_MIRROR || defaultMirror(aptSources),
    bridge,
    subnet: { base: m[1].split('.').map(Number), prefix: Number(m[2]) },
    prefix,
    vcpus: int(env, 'AGENT_VCPUS', cpus().length * 4, 1, 4096),
    memoryGb: int(env, 'AGENT_MEMORY_GB', Math.max(1, Math.floor(totalmem() / 2 ** 30)), 1, 65536),
    consolePort: int(env, 'AGENT_CONSOLE_PORT', 7071, 0, 65535),
    consolePublicHost: env.AGENT_CONSOLE_PUBLIC_HOST || 'localhost',
    tlsCert: env.AGENT_TLS_CERT || undefined,
    tlsKey: env.AGENT_TLS_KEY || undefined,
    buildOnStart: env.AGENT_BUILD_ON_START !== 'false',
  };
}

export const lxcPath = (c: AgentConfig): string => join(c.stateDir, 'lxc');
export const disksDir = (c: AgentConfig): string => join(c.stateDir, 'disks');
