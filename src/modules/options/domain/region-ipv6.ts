import { DomainError } from '../../../shared/kernel/errors/domain-error';

/**
 * A region's IPv6 room: its /48 prefix (the catalog's `ipv6_prefix`) holds 65536 /64s, one per
 * server. Every kind of write that makes a server (a purchase, the seed file) meets the same limit.
 */

/** The CHECK on `regions.ipv6_subnets_used` (at most 65535 /64s out of a region's /48): a server inserted past it is refused. */
export const IPV6_SUBNETS_CHECK = 'regions_ipv6_subnets_used_check';

/** 409 out_of_stock: the region's IPv6 prefix has no /64 left for a new server (as an exhausted address pool answers). */
export const ipv6Exhausted = (regionId: string): DomainError =>
  new DomainError('out_of_stock', `Region ${regionId} has no IPv6 /64 left for a new server; nothing was reserved. Choose another region`);
