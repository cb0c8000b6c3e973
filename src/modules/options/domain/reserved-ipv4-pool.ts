import ipaddr from 'ipaddr.js';
import { invalidRequest } from '../../../shared/kernel/errors/domain-error';

/** The most addresses one region's pool may hold. */
export const MAX_RESERVED_IPV4_POOL = 65_536;

/**
 * A region's pool of reservable IPv4 addresses as the catalog states it: a list of CIDR blocks
 * (`203.0.113.0/27`; a single address is `/32`), expanded into its addresses, every address of
 * each block (they are routed to servers one by one, as DigitalOcean's reserved and Hetzner's
 * floating addresses are, so a block's first and last addresses are handed out too). Blocks may
 * not overlap; at most MAX_RESERVED_IPV4_POOL addresses. 400 naming `field` otherwise.
 */
export function expandReservedIpv4Pool(blocks: readonly string[], field: string): string[] {
  const out: string[] = [];
  const seen = new Set<number>();
  for (const [i, block] of blocks.entries()) {
    const name = `${field}[${i}]`;
    let addr: ipaddr.IPv4;
    let bits: number;
    try {
      const [parsed, prefix] = ipaddr.parseCIDR(block);
      if (parsed.kind() !== 'ipv4' || !ipaddr.IPv4.isValidFourPartDecimal(block.split('/')[0])) throw new Error('not IPv4');
      addr = parsed as ipaddr.IPv4;
      bits = prefix;
    } catch {
      throw invalidRequest(`${name} must be an IPv4 block in CIDR form, such as 203.0.113.0/27`, { field: name });
    }
    const size = 2 ** (32 - bits);
    if (out.length + size > MAX_RESERVED_IPV4_POOL) throw invalidRequest(`${field} may hold at most ${MAX_RESERVED_IPV4_POOL} addresses`, { field: name });
    const b = addr.toByteArray();
    const base = ((b[0] << 24) >>> 0) + (b[1] << 16) + (b[2] << 8) + b[3];
    if (base % size !== 0) throw invalidRequest(`${name} must name a block at its first address (${block} has host bits set)`, { field: name });
    for (let n = base; n < base + size; n++) {
      if (seen.has(n)) throw invalidRequest(`${name} overlaps another block of the pool`, { field: name });
      seen.add(n);
      out.push(`${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`);
    }
  }
  return out;
}
