import fc from 'fast-check';
import { generateKeyPairSync } from 'node:crypto';
import { CanonicalRule, canonicalRule, parseCidr, ruleAllows, verdict } from '../../src/modules/access/domain/firewall-rule';
import { parsePublicKey, validateSshKeyName } from '../../src/modules/access/domain/ssh-public-key';
import { refusalOf } from '../support/assertions';
import { SSH_KEYS } from '../support/ssh-keys';

/** An OpenSSH blob from RFC 4253 fields (uint32 length + bytes each). */
const blobOf = (...fields: Buffer[]): Buffer => Buffer.concat(fields.flatMap((f) => [Buffer.from([0, 0, 0, 0].map((_, i) => (f.length >>> (24 - 8 * i)) & 0xff)), f]));
const str = (s: string) => Buffer.from(s, 'latin1');
const field = { field: 'public_key' };

describe('SSH public keys', () => {
  it("servers.md's worked example: the fingerprint ssh-keygen -l prints", () => {
    expect(parsePublicKey('ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8g x@y')).toEqual({
      type: 'ssh-ed25519',
      normalized: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8g x@y',
      fingerprint: 'SHA256:mKqU+0K8OhKmA8bBQi9Rz0Q5l7/g160hIP+rJYSTNj4',
      bits: 256,
    });
  });

  it.each([
    ['ed', 'ssh-ed25519', 256],
    ['e256', 'ecdsa-sha2-nistp256', 256],
    ['e384', 'ecdsa-sha2-nistp384', 384],
    ['e521', 'ecdsa-sha2-nistp521', 521],
    ['rsa2048', 'ssh-rsa', 2048],
  ] as const)('a %s key made by ssh-keygen: its type, size and the fingerprint ssh-keygen printed', (name, type, bits) => {
    const key = SSH_KEYS[name];
    expect(parsePublicKey(`  ${key.line.replace(' ', '    ')}  `)).toEqual({ type, normalized: key.line, fingerprint: key.fingerprint, bits });
  });

  it('keeps a comment with spaces, one space between its words', () => {
    const [type, data] = SSH_KEYS.ed.line.split(' ');
    expect(parsePublicKey(`${type} ${data} work   laptop 2026`).normalized).toBe(`${type} ${data} work laptop 2026`);
    expect(parsePublicKey(`${type} ${data}`).normalized).toBe(`${type} ${data}`);
  });

  it('refuses each type not accepted, a short RSA key, bad base64, a mismatched inner type, options and certificates', () => {
    const ed = SSH_KEYS.ed.line.split(' ')[1];
    const cases: [string, string][] = [
      [SSH_KEYS.dsa.line, 'public_key type ssh-dss (DSA) is not accepted: DSA keys are obsolete; use ssh-ed25519, ecdsa-sha2-nistp256, ecdsa-sha2-nistp384, ecdsa-sha2-nistp521 or ssh-rsa of 2048 bits or more'],
      [SSH_KEYS.rsa1024.line, 'public_key is an RSA key of 1024 bits; at least 2048 are required'],
      [`ssh-ed25519-cert-v01@openssh.com ${ed}`, 'public_key type ssh-ed25519-cert-v01@openssh.com is a certificate, not accepted; give the plain public key (ssh-ed25519, ecdsa-sha2-nistp256, ecdsa-sha2-nistp384, ecdsa-sha2-nistp521 or ssh-rsa of 2048 bits or more)'],
      [`sk-ssh-ed25519@openssh.com ${ed}`, 'public_key type sk-ssh-ed25519@openssh.com is a security-key (FIDO) key, not accepted; use ssh-ed25519, ecdsa-sha2-nistp256, ecdsa-sha2-nistp384, ecdsa-sha2-nistp521 or ssh-rsa of 2048 bits or more'],
      [`from="10.0.0.1" ${SSH_KEYS.ed.line}`, 'public_key must be "<type> <base64>[ <comment>]" with type ssh-ed25519, ecdsa-sha2-nistp256, ecdsa-sha2-nistp384, ecdsa-sha2-nistp521 or ssh-rsa of 2048 bits or more'],
      [`ssh-rsa ${ed}`, 'public_key names type ssh-rsa but its key data holds a key of type "ssh-ed25519"'],
      [`ssh-ed25519 ${ed.slice(0, -4)}`, 'public_key is truncated: its key data ends inside the Ed25519 key'],
      ['ssh-ed25519 AAAA$$$$', 'public_key key data is not valid base64'],
      ['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8', 'public_key key data is not valid base64'],
      ['ssh-ed25519', 'public_key must be "<type> <base64>[ <comment>]" with type ssh-ed25519, ecdsa-sha2-nistp256, ecdsa-sha2-nistp384, ecdsa-sha2-nistp521 or ssh-rsa of 2048 bits or more'],
      [`${SSH_KEYS.ed.line}\nssh-ed25519 ${ed}`, 'public_key must be one line without control characters (tabs, line breaks)'],
      [`ecdsa-sha2-nistp384 ${SSH_KEYS.e256.line.split(' ')[1]}`, 'public_key names type ecdsa-sha2-nistp384 but its key data holds a key of type "ecdsa-sha2-nistp256"'],
      [`ssh-ed25519 ${blobOf(str('ssh-ed25519'), Buffer.alloc(32, 1), Buffer.alloc(1)).toString('base64')}`, 'public_key has data after its key fields'],
      [`ssh-ed25519 ${blobOf(str('ssh-ed25519'), Buffer.alloc(31, 1)).toString('base64')}`, 'public_key is not a valid ssh-ed25519 key: the key must be 32 bytes'],
      [`ecdsa-sha2-nistp256 ${blobOf(str('ecdsa-sha2-nistp256'), str('nistp256'), Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 7)])).toString('base64')}`, 'public_key is not a valid ecdsa-sha2-nistp256 key: its key data does not make a public key'],
      [`ecdsa-sha2-nistp256 ${blobOf(str('ecdsa-sha2-nistp256'), str('nistp384'), Buffer.alloc(65, 4)).toString('base64')}`, 'public_key names curve nistp256 but its key data names "nistp384"'],
      ['x'.repeat(16385), 'public_key must be at most 16384 characters'],
    ];
    for (const [line, message] of cases) expect([line.slice(0, 60), refusalOf(() => parsePublicKey(line))]).toEqual([line.slice(0, 60), { code: 'invalid_request', message, details: field }]);
    expect(refusalOf(() => parsePublicKey(42))).toEqual({ code: 'invalid_request', message: 'public_key must be a string: an OpenSSH public key line', details: field });
  });

  it('a freshly generated RSA key of 3072 bits built from its JWK: accepted with its size', () => {
    const jwk = generateKeyPairSync('rsa', { modulusLength: 3072 }).publicKey.export({ format: 'jwk' });
    const mpint = (b64url: string) => {
      const b = Buffer.from(b64url, 'base64url');
      return b[0] & 0x80 ? Buffer.concat([Buffer.alloc(1), b]) : b;
    };
    const blob = blobOf(str('ssh-rsa'), mpint(jwk.e as string), mpint(jwk.n as string));
    expect(parsePublicKey(`ssh-rsa ${blob.toString('base64')} gen`).bits).toBe(3072);
  });

  it('names: 1 to 64 characters, not blank, no control character', () => {
    expect(validateSshKeyName('laptop 🔑')).toBe('laptop 🔑');
    expect(validateSshKeyName('é'.repeat(64))).toBe('é'.repeat(64));
    for (const name of ['', '   ', 'a\tb', 'x'.repeat(65), 7]) {
      expect(refusalOf(() => validateSshKeyName(name)).details).toEqual({ field: 'name' });
    }
  });
});

describe('firewall rules: canonical form', () => {
  it("servers.md's example: host bits cleared, RFC 5952, de-duplicated, IPv4 first", () => {
    expect(canonicalRule({ direction: 'in', protocol: 'tcp', port: '22-22', sources: ['10.1.2.3/8', '2001:DB8::1/32', '10.0.0.0/8'] })).toEqual({
      direction: 'in', protocol: 'tcp', port: '22', sources: ['10.0.0.0/8', '2001:db8::/32'], destinations: [], serverId: null, description: null,
    });
  });

  it('refuses what servers.md refuses, naming the field', () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ direction: 'in', protocol: 'icmp', port: '22', sources: ['0.0.0.0/0'] }, 'port', 'port must be absent or null for icmp (a rule allows every ICMP type)'],
      [{ direction: 'in', protocol: 'tcp', sources: ['0.0.0.0/0'] }, 'port', 'port is required for tcp: "N" or "N-M" with 1 ≤ N ≤ M ≤ 65535'],
      [{ direction: 'in', protocol: 'udp', port: '022', sources: ['0.0.0.0/0'] }, 'port', 'port must be "N" or "N-M" with 1 ≤ N ≤ M ≤ 65535, without leading zeros'],
      [{ direction: 'in', protocol: 'udp', port: '80-22', sources: ['0.0.0.0/0'] }, 'port', 'port must be "N" or "N-M" with 1 ≤ N ≤ M ≤ 65535, without leading zeros'],
      [{ direction: 'in', protocol: 'udp', port: '65536', sources: ['0.0.0.0/0'] }, 'port', 'port must be "N" or "N-M" with 1 ≤ N ≤ M ≤ 65535, without leading zeros'],
      [{ direction: 'in', protocol: 'tcp', port: '22' }, 'sources', 'sources is required for an in rule: 1 to 100 IPv4 or IPv6 addresses or CIDRs'],
      [{ direction: 'in', protocol: 'tcp', port: '22', sources: ['::/0'], destinations: ['::/0'] }, 'destinations', 'destinations must be absent for an in rule (it matches sources)'],
      [{ direction: 'out', protocol: 'tcp', port: '22', sources: ['::/0'] }, 'sources', 'sources must be absent for an out rule (it matches destinations)'],
      [{ direction: 'in', protocol: 'tcp', port: '22', sources: [] }, 'sources', 'sources must be a list of 1 to 100 IPv4 or IPv6 addresses or CIDRs'],
      [{ direction: 'in', protocol: 'tcp', port: '22', sources: ['10.0.0.1', '010.0.0.1'] }, 'sources[1]', 'sources[1] must be an IPv4 or IPv6 address or CIDR (e.g. 203.0.113.0/24, 2001:db8::/32)'],
      [{ direction: 'in', protocol: 'tcp', port: '22', sources: ['10.0.0.0/33'] }, 'sources[0]', 'sources[0] must be an IPv4 or IPv6 address or CIDR (e.g. 203.0.113.0/24, 2001:db8::/32); the prefix length is 0 to 32'],
      [{ direction: 'in', protocol: 'tcp', port: '22', sources: ['fe80::1%eth0'] }, 'sources[0]', 'sources[0] must be an IPv4 or IPv6 address or CIDR (e.g. 203.0.113.0/24, 2001:db8::/32)'],
      [{ direction: 'sideways', protocol: 'tcp' }, 'direction', 'direction must be in or out'],
      [{ direction: 'in', protocol: 'gre' }, 'protocol', 'protocol must be tcp, udp or icmp'],
      [{ direction: 'in', protocol: 'icmp', sources: ['::/0'], description: 'x'.repeat(256) }, 'description', 'description must be a string of at most 255 characters, or null'],
    ];
    for (const [input, f, message] of cases) expect(refusalOf(() => canonicalRule(input))).toEqual({ code: 'invalid_request', message, details: { field: f } });
  });

  it('IPv4-mapped IPv6 keeps its dotted part; /0 and bare addresses', () => {
    expect(canonicalRule({ direction: 'out', protocol: 'icmp', destinations: ['::FFFF:1.2.3.4', '0.0.0.0/0', '::/0', '192.0.2.7'] }).destinations).toEqual([
      '0.0.0.0/0', '192.0.2.7/32', '::/0', '::ffff:1.2.3.4/128',
    ]);
  });
});

/** A CIDR and a respelling of it that matches the same addresses: other host bits, other IPv6 spelling, a bare address for a full prefix. */
const cidrPair = fc.oneof(
  fc.tuple(fc.array(fc.nat(255), { minLength: 4, maxLength: 4 }), fc.integer({ min: 0, max: 32 }), fc.array(fc.nat(255), { minLength: 4, maxLength: 4 })).map(([bytes, prefix, noise]) => {
    const keep = (b: number, i: number, n: number) => {
      const bits = Math.min(8, Math.max(0, prefix - i * 8));
      const mask = (0xff << (8 - bits)) & 0xff;
      return (b & mask) | (n & ~mask & 0xff);
    };
    const a = `${bytes.join('.')}/${prefix}`;
    const b = bytes.map((x, i) => keep(x, i, noise[i])).join('.');
    return [a, prefix === 32 ? b : `${b}/${prefix}`] as const;
  }),
  fc.tuple(fc.array(fc.nat(0xffff), { minLength: 8, maxLength: 8 }), fc.integer({ min: 0, max: 128 }), fc.boolean()).map(([groups, prefix, upper]) => {
    const full = groups.map((g) => g.toString(16).padStart(4, '0')).join(':');
    const short = groups.map((g) => g.toString(16)).join(':');
    const b = upper ? full.toUpperCase() : short;
    return [`${short}/${prefix}`, prefix === 128 ? b : `${b}/${prefix}`] as const;
  }),
);

const ruleArb = fc.record({
  direction: fc.constantFrom('in', 'out'),
  protocol: fc.constantFrom('tcp', 'udp', 'icmp'),
  low: fc.integer({ min: 1, max: 65535 }),
  span: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 1000 })),
  pairs: fc.array(cidrPair, { minLength: 1, maxLength: 12 }),
  order: fc.array(fc.nat(), { minLength: 24, maxLength: 24 }),
  dup: fc.boolean(),
});

type RuleSample = typeof ruleArb extends fc.Arbitrary<infer T> ? T : never;

/** Two spellings of one rule: the same packets pass both. */
function spellings(s: RuleSample): [Record<string, unknown>, Record<string, unknown>] {
  const high = Math.min(65535, s.low + s.span);
  const port = s.protocol === 'icmp' ? undefined : high === s.low ? String(s.low) : `${s.low}-${high}`;
  const port2 = s.protocol === 'icmp' ? null : `${s.low}-${high}`;
  const a = s.pairs.map((p) => p[0]);
  const b = s.pairs.map((p) => p[1]).map((x, i) => [s.order[i], x] as const).sort((x, y) => x[0] - y[0]).map((x) => x[1]);
  if (s.dup) b.push(b[0]);
  const member = s.direction === 'in' ? 'sources' : 'destinations';
  return [
    { direction: s.direction, protocol: s.protocol, port, [member]: a },
    { direction: s.direction, protocol: s.protocol, port: port2, [member]: b, description: 'respelt' },
  ];
}

const asInput = (r: CanonicalRule) => ({ direction: r.direction, protocol: r.protocol, port: r.port, sources: r.sources, destinations: r.destinations, server_id: r.serverId });
const matchOnly = ({ description: _d, ...rest }: CanonicalRule & { description: string | null }) => rest;

describe('firewall rules: properties (fast-check)', () => {
  it('canonicalization is idempotent: canonical(canonical(r)) = canonical(r)', () => {
    fc.assert(
      fc.property(ruleArb, (s) => {
        for (const input of spellings(s)) {
          const once = canonicalRule(input);
          expect(canonicalRule({ ...asInput(once), description: once.description })).toEqual(once);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('two spellings of a rule that allow the same packets compare equal after it', () => {
    fc.assert(
      fc.property(ruleArb, fc.array(fc.nat(255), { minLength: 16, maxLength: 16 }), fc.integer({ min: 1, max: 65535 }), (s, probe, probePort) => {
        const [a, b] = spellings(s).map(canonicalRule);
        expect(matchOnly(a)).toEqual(matchOnly(b));
        // And they do allow the same packets: probes at the listed networks and at a random address.
        const addresses = [...(a.direction === 'in' ? a.sources : a.destinations).map((c) => parseCidr(c, 'x')), parseCidr(probe.slice(0, 4).join('.'), 'x')];
        for (const address of addresses) {
          const packet = { direction: a.direction, protocol: a.protocol, address: { ...address, prefix: address.kind === 'ipv4' ? 32 : 128 }, port: a.protocol === 'icmp' ? null : probePort };
          expect(ruleAllows(a, packet)).toBe(ruleAllows(b, packet));
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('firewall rules: verdict', () => {
  const ssh = { id: 'fwr_1', ...canonicalRule({ direction: 'in', protocol: 'tcp', port: '22', sources: ['203.0.113.0/24'] }) };
  const web = { id: 'fwr_2', ...canonicalRule({ direction: 'in', protocol: 'tcp', port: '1-1024', sources: ['0.0.0.0/0'] }) };
  const dns = { id: 'fwr_3', ...canonicalRule({ direction: 'out', protocol: 'udp', port: '53', destinations: ['2001:db8::/32'] }) };
  const pkt = (direction: 'in' | 'out', protocol: 'tcp' | 'udp' | 'icmp', address: string, port: number | null) => ({ direction, protocol, address: parseCidr(address, 'address'), port });

  it('inbound: denied unless an in rule allows; the oldest allowing rule is named', () => {
    expect(verdict([ssh, web], pkt('in', 'tcp', '203.0.113.9', 22))).toEqual({ allowed: true, ruleId: 'fwr_1' });
    expect(verdict([ssh, web], pkt('in', 'tcp', '198.51.100.1', 22))).toEqual({ allowed: true, ruleId: 'fwr_2' });
    expect(verdict([ssh], pkt('in', 'tcp', '198.51.100.1', 22))).toEqual({ allowed: false, ruleId: null });
    expect(verdict([ssh, web], pkt('in', 'udp', '203.0.113.9', 22))).toEqual({ allowed: false, ruleId: null });
    expect(verdict([], pkt('in', 'icmp', '203.0.113.9', null))).toEqual({ allowed: false, ruleId: null });
  });

  it('outbound: allowed until an out rule is in force, then only what out rules allow', () => {
    expect(verdict([ssh], pkt('out', 'tcp', '198.51.100.1', 443))).toEqual({ allowed: true, ruleId: null });
    expect(verdict([ssh, dns], pkt('out', 'tcp', '198.51.100.1', 443))).toEqual({ allowed: false, ruleId: null });
    expect(verdict([ssh, dns], pkt('out', 'udp', '2001:db8:ffff::1', 53))).toEqual({ allowed: true, ruleId: 'fwr_3' });
  });
});

describe('robustness (fast-check): any input is accepted or refused with a 400, never another error', () => {
  const refusedOrAccepted = (work: () => unknown) => {
    try {
      work();
    } catch (err) {
      expect(err).toMatchObject({ name: 'DomainError', code: 'invalid_request', details: { field: expect.any(String) } });
    }
  };

  it('public keys: random lines and random blobs under each accepted type', () => {
    fc.assert(
      fc.property(fc.constantFrom('ssh-ed25519', 'ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp521', 'ssh-rsa', 'x'), fc.uint8Array({ maxLength: 600 }), fc.string(), (type, blob, junk) => {
        refusedOrAccepted(() => parsePublicKey(`${type} ${Buffer.from(blob).toString('base64')} ${junk}`));
        // The right header (and curve name), then random fields: the parser reads past the type.
        const header = type.startsWith('ecdsa') ? [str(type), str(type.slice(11))] : [str(type)];
        refusedOrAccepted(() => parsePublicKey(`${type} ${Buffer.concat([blobOf(...header), Buffer.from(blob)]).toString('base64')}`));
        refusedOrAccepted(() => parsePublicKey(`${type} ${blobOf(...header, Buffer.from(blob), Buffer.from(blob)).toString('base64')}`));
        refusedOrAccepted(() => parsePublicKey(junk));
      }),
      { numRuns: 500 },
    );
  });

  it('firewall rules: random members', () => {
    const anything = fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.array(fc.oneof(fc.string(), fc.ipV4(), fc.ipV6(), fc.integer())));
    fc.assert(
      fc.property(fc.constantFrom('in', 'out', 'x'), fc.constantFrom('tcp', 'udp', 'icmp', 7), anything, anything, anything, (direction, protocol, port, sources, destinations) => {
        refusedOrAccepted(() => canonicalRule({ direction, protocol, port, sources, destinations }));
      }),
      { numRuns: 1000 },
    );
  });
});
