import { createHash } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import { invalidRequest } from '../../../shared/kernel/errors/domain-error';

export const DIRECTIONS = ['in', 'out'] as const;
export type Direction = (typeof DIRECTIONS)[number];
export const PROTOCOLS = ['tcp', 'udp', 'icmp'] as const;
export type Protocol = (typeof PROTOCOLS)[number];

export const MAX_ADDRESSES = 100;
export const MAX_DESCRIPTION_LENGTH = 255;

/** What a rule matches, in its canonical form: the form stored, answered and compared. */
export interface CanonicalRule {
  direction: Direction;
  protocol: Protocol;
  /** `"N"` or `"N-M"` with N < M; null for icmp. */
  port: string | null;
  sources: string[];
  destinations: string[];
  serverId: string | null;
}

export interface FirewallRule extends CanonicalRule {
  id: string;
  orgId: string;
  description: string | null;
  createdAt: Date;
}

/** The members of POST /v1/firewall-rules as sent (unvalidated). */
export interface RuleInput {
  direction?: unknown;
  protocol?: unknown;
  port?: unknown;
  sources?: unknown;
  destinations?: unknown;
  server_id?: unknown;
  description?: unknown;
}

const bad = (field: string, message: string) => invalidRequest(`${field} ${message}`, { field });

const PORT = /^([1-9][0-9]{0,4})(?:-([1-9][0-9]{0,4}))?$/;

/** `"N"` or `"N-M"`, 1 ≤ N ≤ M ≤ 65535, no leading zeros; `"N-N"` is `"N"`. */
export function canonicalPort(port: unknown, field = 'port'): string {
  const rule = 'must be "N" or "N-M" with 1 ≤ N ≤ M ≤ 65535, without leading zeros';
  if (typeof port !== 'string') throw bad(field, `${rule} (a string)`);
  const match = PORT.exec(port);
  if (!match) throw bad(field, rule);
  const low = Number(match[1]);
  const high = match[2] === undefined ? low : Number(match[2]);
  if (low > 65535 || high > 65535 || low > high) throw bad(field, rule);
  return low === high ? String(low) : `${low}-${high}`;
}

/** An address as parsed: its kind, bytes and prefix length. */
export interface ParsedCidr {
  kind: 'ipv4' | 'ipv6';
  bytes: number[];
  prefix: number;
}

const PREFIX = /^(0|[1-9][0-9]{0,2})$/;

/**
 * An IPv4 or IPv6 address or CIDR, read by ipaddr.js: IPv4 only in four-part decimal (no octal,
 * hexadecimal or short forms), IPv6 without a zone; a bare address is /32 or /128.
 */
export function parseCidr(text: unknown, field: string): ParsedCidr {
  const rule = 'must be an IPv4 or IPv6 address or CIDR (e.g. 203.0.113.0/24, 2001:db8::/32)';
  if (typeof text !== 'string' || text.length > 64) throw bad(field, rule);
  const slash = text.indexOf('/');
  const address = slash < 0 ? text : text.slice(0, slash);
  const prefixText = slash < 0 ? undefined : text.slice(slash + 1);
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  if (ipaddr.IPv4.isValidFourPartDecimal(address)) parsed = ipaddr.IPv4.parse(address);
  else if (!address.includes('%') && ipaddr.IPv6.isValid(address)) parsed = ipaddr.IPv6.parse(address);
  else throw bad(field, rule);
  const max = parsed.kind() === 'ipv4' ? 32 : 128;
  if (prefixText !== undefined && !PREFIX.test(prefixText)) throw bad(field, `${rule}; the prefix length is 0 to ${max}, without leading zeros`);
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (prefix > max) throw bad(field, `${rule}; the prefix length is 0 to ${max}`);
  return { kind: parsed.kind(), bytes: parsed.toByteArray(), prefix };
}

/** The network of a parsed CIDR: host bits cleared. */
function network(c: ParsedCidr): ParsedCidr {
  const bytes = c.bytes.map((b, i) => {
    const bitsHere = Math.min(8, Math.max(0, c.prefix - i * 8));
    return b & ((0xff << (8 - bitsHere)) & 0xff);
  });
  return { ...c, bytes };
}

/** RFC 5952 text of an address (IPv4-mapped IPv6 with its IPv4 part dotted, as section 5 recommends). */
function addressText(c: ParsedCidr): string {
  if (c.kind === 'ipv4') return ipaddr.fromByteArray(c.bytes).toString();
  const v6 = ipaddr.fromByteArray(c.bytes) as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return `::ffff:${v6.toIPv4Address().toString()}`;
  return v6.toRFC5952String();
}

export const cidrText = (c: ParsedCidr): string => `${addressText(c)}/${c.prefix}`;

function compareCidrs(a: ParsedCidr, b: ParsedCidr): number {
  if (a.kind !== b.kind) return a.kind === 'ipv4' ? -1 : 1;
  for (let i = 0; i < a.bytes.length; i++) if (a.bytes[i] !== b.bytes[i]) return a.bytes[i] - b.bytes[i];
  return a.prefix - b.prefix;
}

/** 1–100 CIDRs → host bits cleared, RFC 5952, de-duplicated, IPv4 first, by address then prefix length. */
export function canonicalAddresses(list: unknown, field: string): string[] {
  if (!Array.isArray(list) || list.length === 0 || list.length > MAX_ADDRESSES) {
    throw bad(field, `must be a list of 1 to ${MAX_ADDRESSES} IPv4 or IPv6 addresses or CIDRs`);
  }
  const parsed = list.map((item, i) => network(parseCidr(item, `${field}[${i}]`)));
  parsed.sort(compareCidrs);
  const out: string[] = [];
  for (const c of parsed) {
    const text = cidrText(c);
    if (out[out.length - 1] !== text) out.push(text);
  }
  return out;
}

/**
 * Validates a rule as sent and returns its canonical form (servers.md): direction, protocol, the
 * port rule (required for tcp and udp, null for icmp), sources for in and destinations for out
 * (the other absent, null or []), server_id (a string or null; whether it names a live server of
 * the organization is the use case's check), description (≤ 255 characters or null).
 */
export function canonicalRule(input: RuleInput): CanonicalRule & { description: string | null } {
  const { direction, protocol } = input;
  if (typeof direction !== 'string' || !(DIRECTIONS as readonly string[]).includes(direction)) throw bad('direction', 'must be in or out');
  if (typeof protocol !== 'string' || !(PROTOCOLS as readonly string[]).includes(protocol)) throw bad('protocol', 'must be tcp, udp or icmp');
  let port: string | null = null;
  if (protocol === 'icmp') {
    if (input.port !== undefined && input.port !== null) throw bad('port', 'must be absent or null for icmp (a rule allows every ICMP type)');
  } else {
    if (input.port === undefined || input.port === null) throw bad('port', `is required for ${protocol}: "N" or "N-M" with 1 ≤ N ≤ M ≤ 65535`);
    port = canonicalPort(input.port);
  }
  const absent = (v: unknown) => v === undefined || v === null || (Array.isArray(v) && v.length === 0);
  let sources: string[] = [];
  let destinations: string[] = [];
  if (direction === 'in') {
    if (!absent(input.destinations)) throw bad('destinations', 'must be absent for an in rule (it matches sources)');
    if (input.sources === undefined || input.sources === null) throw bad('sources', 'is required for an in rule: 1 to 100 IPv4 or IPv6 addresses or CIDRs');
    sources = canonicalAddresses(input.sources, 'sources');
  } else {
    if (!absent(input.sources)) throw bad('sources', 'must be absent for an out rule (it matches destinations)');
    if (input.destinations === undefined || input.destinations === null) throw bad('destinations', 'is required for an out rule: 1 to 100 IPv4 or IPv6 addresses or CIDRs');
    destinations = canonicalAddresses(input.destinations, 'destinations');
  }
  let serverId: string | null = null;
  if (input.server_id !== undefined && input.server_id !== null) {
    if (typeof input.server_id !== 'string' || input.server_id.length === 0 || input.server_id.length > 128) throw bad('server_id', 'must be a server id or null');
    serverId = input.server_id;
  }
  let description: string | null = null;
  if (input.description !== undefined && input.description !== null) {
    if (typeof input.description !== 'string' || [...input.description].length > MAX_DESCRIPTION_LENGTH) {
      throw bad('description', `must be a string of at most ${MAX_DESCRIPTION_LENGTH} characters, or null`);
    }
    description = input.description;
  }
  return { direction: direction as Direction, protocol: protocol as Protocol, port, sources, destinations, serverId, description };
}

/** The digest the unique index compares: the canonical rule, description aside. */
export function ruleDigest(rule: CanonicalRule): string {
  const text = JSON.stringify([rule.serverId, rule.direction, rule.protocol, rule.port, rule.sources, rule.destinations]);
  return createHash('sha256').update(text).digest('hex');
}

/** A packet to judge: direction, protocol, the remote address and (tcp, udp) the port. */
export interface Packet {
  direction: Direction;
  protocol: Protocol;
  address: ParsedCidr;
  port: number | null;
}

function contains(cidrTextValue: string, address: ParsedCidr): boolean {
  const c = parseCidr(cidrTextValue, 'rule');
  if (c.kind !== address.kind) return false;
  const a = network({ ...address, prefix: c.prefix });
  return a.bytes.every((b, i) => b === c.bytes[i]);
}

function portCovers(rulePort: string | null, port: number | null): boolean {
  if (rulePort === null || port === null) return rulePort === null && port === null;
  const [low, high = low] = rulePort.split('-').map(Number);
  return low <= port && port <= high;
}

/** Whether a rule allows the packet (same direction and protocol, the port in range, the address in a CIDR). */
export function ruleAllows(rule: CanonicalRule, packet: Packet): boolean {
  if (rule.direction !== packet.direction || rule.protocol !== packet.protocol || !portCovers(rule.port, packet.port)) return false;
  const list = rule.direction === 'in' ? rule.sources : rule.destinations;
  return list.some((c) => contains(c, packet.address));
}

/**
 * The verdict on a packet under the rules in force, oldest first (Hetzner's semantics): inbound
 * is denied unless an in rule allows; outbound is allowed while no out rule is in force, then
 * only what out rules allow. `ruleId`: the oldest allowing rule, or null.
 */
export function verdict<R extends CanonicalRule & { id: string }>(rules: R[], packet: Packet): { allowed: boolean; ruleId: string | null } {
  const allowing = rules.find((r) => ruleAllows(r, packet));
  if (allowing) return { allowed: true, ruleId: allowing.id };
  if (packet.direction === 'out' && !rules.some((r) => r.direction === 'out')) return { allowed: true, ruleId: null };
  return { allowed: false, ruleId: null };
}
