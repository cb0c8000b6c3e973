import { MAX_RESERVED_IPV4_POOL, expandReservedIpv4Pool } from '../../src/modules/options/domain/reserved-ipv4-pool';
import { refusalOf } from '../support/assertions';

const FIELD = 'regions.id-jkt.reserved_ipv4_pool';

describe('a region pool of reserved IPv4 addresses (CIDR blocks, expanded)', () => {
  it('hands out every address of each block, in order, a /32 being one address', () => {
    expect(expandReservedIpv4Pool(['198.51.100.0/30', '203.0.113.9/32'], FIELD)).toEqual([
      '198.51.100.0', '198.51.100.1', '198.51.100.2', '198.51.100.3', '203.0.113.9',
    ]);
    expect(expandReservedIpv4Pool(['203.0.113.0/27'], FIELD)).toHaveLength(32);
    expect(expandReservedIpv4Pool(['10.0.255.254/31'], FIELD)).toEqual(['10.0.255.254', '10.0.255.255']);
  });

  it('refuses, naming the block: not IPv4 CIDR, host bits set, overlapping blocks, more than the limit', () => {
    for (const bad of ['203.0.113.0', '2001:db8::/126', '203.0.113.0/33', 'pool', '203.0.113/24']) {
      expect(refusalOf(() => expandReservedIpv4Pool([bad], FIELD))).toEqual({
        code: 'invalid_request', message: `${FIELD}[0] must be an IPv4 block in CIDR form, such as 203.0.113.0/27`, details: { field: `${FIELD}[0]` },
      });
    }
    expect(refusalOf(() => expandReservedIpv4Pool(['203.0.113.4/30', '203.0.113.1/30'], FIELD))).toEqual({
      code: 'invalid_request', message: `${FIELD}[1] must name a block at its first address (203.0.113.1/30 has host bits set)`, details: { field: `${FIELD}[1]` },
    });
    expect(refusalOf(() => expandReservedIpv4Pool(['203.0.113.0/28', '203.0.113.8/29'], FIELD))).toEqual({
      code: 'invalid_request', message: `${FIELD}[1] overlaps another block of the pool`, details: { field: `${FIELD}[1]` },
    });
    expect(refusalOf(() => expandReservedIpv4Pool(['10.0.0.0/15'], FIELD))).toEqual({
      code: 'invalid_request', message: `${FIELD} may hold at most ${MAX_RESERVED_IPV4_POOL} addresses`, details: { field: `${FIELD}[0]` },
    });
  });
});
