import ipaddr from 'ipaddr.js';

/**
 * Where a webhook may be sent (checked at creation, at PATCH and at each connection): an
 * absolute https URL of at most 2048 characters, any port, no user info, whose host (as WHATWG
 * URL parsing normalises it: `2130706433` is 127.0.0.1) is, or resolves only to, public
 * addresses. Blocked: the ranges below, and their IPv4-mapped (::ffff:0:0/96) and NAT64
 * (64:ff9b::/96) forms. `allowPrivate` (WEBHOOK_ALLOW_PRIVATE_URLS, tests and local use) lets
 * http and any address through.
 */
const BLOCKED_V4 = ['0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12', '192.0.0.0/24', '192.168.0.0/16', '198.18.0.0/15', '224.0.0.0/4', '240.0.0.0/4'].map((c) =>
  ipaddr.IPv4.parseCIDR(c),
);
const BLOCKED_V6 = ['::/128', '::1/128', 'fc00::/7', 'fe80::/10', 'ff00::/8'].map((c) => ipaddr.IPv6.parseCIDR(c));
const NAT64 = ipaddr.IPv6.parseCIDR('64:ff9b::/96');

export const MAX_URL_LENGTH = 2048;

/** Whether an IP address (text) may not be reached. */
export function isBlockedAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return true;
  let ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6') {
    const v6 = ip as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) ip = v6.toIPv4Address();
    else if (v6.match(NAT64)) ip = new ipaddr.IPv4(v6.toByteArray().slice(12));
  }
  if (ip.kind() === 'ipv4') return BLOCKED_V4.some((range) => (ip as ipaddr.IPv4).match(range));
  return BLOCKED_V6.some((range) => (ip as ipaddr.IPv6).match(range));
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
