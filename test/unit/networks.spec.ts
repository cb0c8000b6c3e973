import { firstFreeAddress, parseIpRange, parseIpv6Prefix, parseNetworkIp, rangesOverlap } from '../../src/modules/servers/domain/network';
import { refusalOf } from '../support/assertions';

describe('private network addresses', () => {
  it('ip_range: an RFC 1918 range of /16 to /24 written as its network address, canonical', () => {
    expect(parseIpRange('10.10.0.0/16')).toBe('10.10.0.0/16');
    expect(parseIpRange('172.31.255.0/24')).toBe('172.31.255.0/24');
    expect(parseIpRange('192.168.0.0/16')).toBe('192.168.0.0/16');
    const rule = 'ip_range must be a private IPv4 range (10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16) with a prefix of /16 to /24, given as its network address, e.g. 10.10.0.0/16';
    for (const bad of ['8.8.0.0/16', '172.32.0.0/16', '10.0.0.0', '10.0.0.0/16/1', '010.0.0.0/16', '10.0.0.0/x', 'fd00::/16', '']) {
      expect(refusalOf(() => parseIpRange(bad))).toEqual({ code: 'invalid_request', message: rule, details: { field: 'ip_range' } });
    }
    expect(refusalOf(() => parseIpRange('10.0.0.0/25'))).toEqual({ code: 'invalid_request', message: 'ip_range must have a prefix of /16 to /24; got /25', details: { field: 'ip_range' } });
    expect(refusalOf(() => parseIpRange('10.1.2.0/16'))).toEqual({ code: 'invalid_request', message: 'ip_range must be given as its network address: 10.1.0.0/16', details: { field: 'ip_range' } });
  });

  it('overlap: any shared address', () => {
    expect(rangesOverlap('10.10.0.0/16', '10.10.200.0/24')).toBe(true);
    expect(rangesOverlap('10.10.0.0/24', '10.10.1.0/24')).toBe(false);
    expect(rangesOverlap('192.168.0.0/16', '192.168.255.0/24')).toBe(true);
  });

  it('ip: inside the range, neither its network nor its broadcast address', () => {
    expect(parseNetworkIp('10.10.0.1', '10.10.0.0/24')).toBe('10.10.0.1');
    expect(parseNetworkIp('10.10.255.254', '10.10.0.0/16')).toBe('10.10.255.254');
    for (const bad of ['10.10.0.0', '10.10.0.255', '10.10.1.1']) {
      expect(refusalOf(() => parseNetworkIp(bad, '10.10.0.0/24'))).toEqual({
        code: 'invalid_request', message: `ip ${bad} is not a usable address of the network's range 10.10.0.0/24`, details: { field: 'ip' },
      });
    }
    expect(refusalOf(() => parseNetworkIp(5, '10.10.0.0/24')).details).toEqual({ field: 'ip' });
  });

  it('the first free address skips the first three and the broadcast address', () => {
    expect(firstFreeAddress('10.10.0.0/24', new Set())).toBe('10.10.0.3');
    expect(firstFreeAddress('10.10.0.0/24', new Set(['10.10.0.3', '10.10.0.4']))).toBe('10.10.0.5');
    const all = new Set(Array.from({ length: 252 }, (_, i) => `10.10.0.${i + 3}`));
    expect(firstFreeAddress('10.10.0.0/24', all)).toBeUndefined();
  });

  it('a region IPv6 prefix: a /48 written as its network address', () => {
    expect(parseIpv6Prefix('2001:db8:10::/48', 'p')).toBe('2001:db8:10::/48');
    expect(parseIpv6Prefix('2001:0db8:0010:0000::/48', 'p')).toBe('2001:db8:10::/48');
    for (const bad of ['2001:db8:10::/64', '2001:db8:10::1/48', '10.0.0.0/8', 'x']) {
      expect(refusalOf(() => parseIpv6Prefix(bad, 'regions.r.ipv6_prefix'))).toEqual({
        code: 'invalid_request', message: 'regions.r.ipv6_prefix must be an IPv6 /48 given as its network address, e.g. 2001:db8:10::/48', details: { field: 'regions.r.ipv6_prefix' },
      });
    }
  });
});
