import ipaddr from 'ipaddr.js';
import { DomainError, invalidRequest } from '../../../shared/kernel/errors/domain-error';
import { Labels } from '../../prepaid/domain/labels';

/**
 * A private network (docs/reference/networks.md): an organization's RFC 1918 IPv4 range in one
 * region, which its servers in that region join with an address of their own. Free.
 */
export interface Network {
  id: string;
  orgId: string;
  name: string;
  regionId: string;
  /** Canonical CIDR: the network address and prefix, e.g. 10.10.0.0/16. */
  ipRange: string;
  labels: Labels;
  /** The servers attached (or being detached), by id. */
  serverIds: string[];
  createdAt: Date;
}

/** At most this many private networks per server (DigitalOcean's VPC allows one, Hetzner Cloud three). */
export const MAX_NETWORKS_PER_SERVER = 3;
/** The first addresses of a range a server is never given unless it asks: the network address, the gateway and one reserved (Hetzner Cloud's rule). */
export const RESERVED_LEADING_ADDRESSES = 3;

export const NETWORK_NAME_PATTERN = /^[A-Za-z0-9]([A-Za-z0-9._-]{0,62}[A-Za-z0-9])?$/;
export const NETWORK_NAME_RULE = '1 to 64 letters, digits, ".", "_" or "-", starting and ending with a letter or digit';

const PRIVATE_BLOCKS: [ipaddr.IPv4, number][] = [
  [ipaddr.IPv4.parse('10.0.0.0'), 8],
  [ipaddr.IPv4.parse('172.16.0.0'), 12],
  [ipaddr.IPv4.parse('192.168.0.0'), 16],
];

const toInt = (a: ipaddr.IPv4): number => a.toByteArray().reduce((n, b) => n * 256 + b, 0);
const fromInt = (n: number): string => [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');

/** The range as [first, last] address numbers. */
export function rangeBounds(cidr: string): [number, number] {
  const [address, prefix] = ipaddr.IPv4.parseCIDR(cidr);
  const size = 2 ** (32 - prefix);
  const first = Math.floor(toInt(address) / size) * size;
  return [first, first + size - 1];
}

/**
 * `ip_range`: an IPv4 CIDR in four-part decimal with a prefix of /16 to /24, inside 10.0.0.0/8,
 * 172.16.0.0/12 or 192.168.0.0/16, given as its network address (10.10.0.0/16, not 10.10.1.0/16).
 * Answers its canonical form; anything else is 400 naming ip_range.
 */
export function parseIpRange(value: string): string {
  const rule = 'ip_range must be a private IPv4 range (10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16) with a prefix of /16 to /24, given as its network address, e.g. 10.10.0.0/16';
  const [address, prefixText, ...rest] = value.split('/');
  if (rest.length > 0 || prefixText === undefined || !/^\d{1,2}$/.test(prefixText) || !ipaddr.IPv4.isValidFourPartDecimal(address)) {
    throw invalidRequest(rule, { field: 'ip_range' });
  }
  const prefix = Number(prefixText);
  if (prefix < 16 || prefix > 24) throw invalidRequest(`ip_range must have a prefix of /16 to /24; got /${prefix}`, { field: 'ip_range' });
  const parsed = ipaddr.IPv4.parse(address);
  if (!PRIVATE_BLOCKS.some(([block, bits]) => parsed.match(block, bits))) throw invalidRequest(rule, { field: 'ip_range' });
  const canonical = `${fromInt(rangeBounds(`${address}/${prefix}`)[0])}/${prefix}`;
  if (canonical !== `${parsed.toString()}/${prefix}`) throw invalidRequest(`ip_range must be given as its network address: ${canonical}`, { field: 'ip_range' });
  return canonical;
}

/** Whether two canonical ranges share an address. */
export function rangesOverlap(a: string, b: string): boolean {
  const [a1, a2] = rangeBounds(a);
  const [b1, b2] = rangeBounds(b);
  return a1 <= b2 && b1 <= a2;
}

/**
 * `ip` asked for in `range`: one IPv4 address in four-part decimal inside the range, neither its
 * network address nor its broadcast address (400 naming ip otherwise). Answers its canonical form.
 */
export function parseNetworkIp(value: unknown, range: string): string {
  if (typeof value !== 'string' || !ipaddr.IPv4.isValidFourPartDecimal(value)) throw invalidRequest('ip must be one IPv4 address, e.g. 10.10.0.5', { field: 'ip' });
  const n = toInt(ipaddr.IPv4.parse(value));
  const [first, last] = rangeBounds(range);
  if (n <= first || n >= last) throw invalidRequest(`ip ${value} is not a usable address of the network's range ${range}`, { field: 'ip' });
  return fromInt(n);
}

/** The first address of `range` after its first three (network, gateway, reserved) and before its broadcast address that is not in `taken`; none: undefined. */
export function firstFreeAddress(range: string, taken: ReadonlySet<string>): string | undefined {
  const [first, last] = rangeBounds(range);
  for (let n = first + RESERVED_LEADING_ADDRESSES; n < last; n++) {
    const ip = fromInt(n);
    if (!taken.has(ip)) return ip;
  }
  return undefined;
}

/** 409 conflict: the range overlaps another network of the organization in the region (named in details.existing_id). */
export const rangeOverlaps = (range: string, other: { id: string; ipRange: string }): DomainError =>
  new DomainError('conflict', `ip_range ${range} overlaps network ${other.id} (${other.ipRange}) of the organization in the same region`, { existing_id: other.id, field: 'ip_range' });

/** 409 conflict: the address is another server's in the network. */
export const addressTaken = (ip: string, networkId: string): DomainError =>
  new DomainError('conflict', `${ip} is taken in network ${networkId} by another server; ask for another address or leave ip out`, { field: 'ip', network_id: networkId });

/**
 * A region's IPv6 prefix in the seed file: a /48 (servers get the /64s inside it). Answers its
 * canonical form (e.g. 2001:db8:10::/48); anything else is 400 naming `field`.
 */
export function parseIpv6Prefix(value: string, field: string): string {
  try {
    const [address, prefix] = ipaddr.IPv6.parseCIDR(value);
    if (prefix !== 48) throw new Error('not /48');
    const network = ipaddr.IPv6.networkAddressFromCIDR(value);
    if (network.toString() !== address.toString()) throw new Error('not the network address');
    return `${network.toString()}/48`;
  } catch {
    throw invalidRequest(`${field} must be an IPv6 /48 given as its network address, e.g. 2001:db8:10::/48`, { field });
  }
}
