import ipaddr from 'ipaddr.js';

/**
 * Where a webhook may be sent (checked at creation, at PATCH and at each connection): an
 * absolute https URL of at most 2048 characters, any port, no user info, whose host (as WHATWG
 * URL parsing normalises it: `2130706433` is 127.0.0.1) is, or resolves only to, public
 * addresses: those ipaddr.js names `unicast`, IPv4 and IPv6 alike (every other range it names
 * is refused: private, loopback, link-local, carrier-grade NAT, documentation, benchmarking,
 * multicast, reserved, site-local, discard...), an IPv6 address also inside the global unicast
 * 2000::/3. An IPv6 address that carries an IPv4 address (IPv4-mapped ::ffff:0:0/96,
 * IPv4-translated ::ffff:0:0:0/96, NAT64 64:ff9b::/96 and 64:ff9b:1::/48, 6to4 2002::/16,
 * Teredo 2001::/32) is checked as that IPv4 address (each one it may carry); the deprecated
 * IPv4-compatible ::/96 (`::7f00:1`) is refused. `allowPrivate` (WEBHOOK_ALLOW_PRIVATE_URLS,
 * tests and local use) lets http and any address through.
 */
const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');
const LOCAL_NAT64 = ipaddr.IPv6.parseCIDR('64:ff9b:1::/48');

export const MAX_URL_LENGTH = 2048;

const v4 = (bytes: number[]): ipaddr.IPv4 => new ipaddr.IPv4(bytes);

/** The IPv4 addresses an IPv6 address carries (its range says where), or undefined when it carries none. */
function embeddedV4(ip: ipaddr.IPv6): ipaddr.IPv4[] | undefined {
  const b = ip.toByteArray();
  switch (ip.range()) {
    case 'ipv4Mapped':
    case 'rfc6145':
      return [v4(b.slice(12))];
    case 'rfc6052':
      // The /96 form; the local-use prefix may also be a /48 (RFC 6052: bits 48-63 and 72-87).
      return ip.match(LOCAL_NAT64) ? [v4(b.slice(12)), v4([b[6], b[7], b[9], b[10]])] : [v4(b.slice(12))];
    case '6to4':
      return [v4(b.slice(2, 6))];
    case 'teredo':
      // The Teredo server (bits 32-63) and the client (the last 32 bits, inverted).
      return [v4(b.slice(4, 8)), v4(b.slice(12).map((x) => x ^ 0xff))];
    default:
      return undefined;
  }
}

/** Whether an IP address (text) may not be reached. */
export function isBlockedAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return true;
  const ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv4') return ip.range() !== 'unicast';
  const v6 = ip as ipaddr.IPv6;
  const carried = embeddedV4(v6);
  if (carried) return carried.some((a) => a.range() !== 'unicast');
  return v6.range() !== 'unicast' || !v6.match(GLOBAL_UNICAST_V6);
}

/** Appended to the refusals a receiver on this machine or a private network meets: the setting that allows it. */
export const PRIVATE_URLS_HINT = '; a receiver on this machine or a private network needs the operator setting WEBHOOK_ALLOW_PRIVATE_URLS=true';

export type UrlCheck = { ok: true; url: URL; host: string; literal: boolean } | { ok: false; reason: string };

/** The URL's own rules (no lookup): the parsed URL and its host (an IP literal without brackets), or why not. */
export function checkUrlShape(raw: string, allowPrivate: boolean): UrlCheck {
  if (raw.length > MAX_URL_LENGTH) return { ok: false, reason: `url must be at most ${MAX_URL_LENGTH} characters` };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'url must be an absolute URL such as https://example.com/webhooks' };
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) return { ok: false, reason: `url must use https${PRIVATE_URLS_HINT}` };
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'url must not hold user info' };
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (host === '') return { ok: false, reason: 'url must name a host' };
  const literal = ipaddr.isValid(host);
  if (literal && !allowPrivate && isBlockedAddress(host)) return { ok: false, reason: `url must not point at a private, loopback, link-local or reserved address${PRIVATE_URLS_HINT}` };
  return { ok: true, url, host, literal };
}

export type Lookup = (host: string) => Promise<string[]>;

export type Resolution = { ok: true; url: URL; host: string; address: string } | { ok: false; error: 'dns_error' | 'blocked_address'; reason: string };

/**
 * Resolves the URL's host once and checks every address it gives; the address to connect to
 * (the first). A name that does not resolve: dns_error; any blocked address: blocked_address.
 */
export async function resolveUrl(raw: string, allowPrivate: boolean, lookup: Lookup): Promise<Resolution> {
  const shape = checkUrlShape(raw, allowPrivate);
  if (!shape.ok) return { ok: false, error: 'blocked_address', reason: shape.reason };
  if (shape.literal) return { ok: true, url: shape.url, host: shape.host, address: shape.host };
  let addresses: string[];
  try {
    addresses = await lookup(shape.host);
  } catch {
    addresses = [];
  }
  if (addresses.length === 0) return { ok: false, error: 'dns_error', reason: `url's host ${shape.host} does not resolve` };
  if (!allowPrivate && addresses.some(isBlockedAddress)) {
    return { ok: false, error: 'blocked_address', reason: `url's host resolves to a private, loopback, link-local or reserved address${PRIVATE_URLS_HINT}` };
  }
  return { ok: true, url: shape.url, host: shape.host, address: addresses[0] };
}
