import { Webhook } from 'standardwebhooks';
import { eventBody } from '../../src/modules/webhooks/domain/events';
import { openSecret, sealSecret } from '../../src/modules/webhooks/domain/secret-box';
import { newWebhookSecret, signatureHeader } from '../../src/modules/webhooks/domain/signing';
import { PRIVATE_URLS_HINT, checkUrlShape, isBlockedAddress, resolveUrl } from '../../src/modules/webhooks/domain/url-policy';
import { nextAttemptDelayMs, parseRetryAfter } from '../../src/modules/webhooks/domain/webhook';

describe('webhook signatures (funding.md worked example)', () => {
  const body =
    '{"id":"evt_Fx1Yk2Zl3Am4Bn5Co6Dp7Eq8","type":"ping","created_at":"2026-01-01T00:00:00.000Z",' + '"data":{"endpoint_id":"we_Gh1Ij2Kl3Mn4Op5Qr6St7Uv8"}}';
  const oldSecret = 'whsec_' + Buffer.from(Array.from({ length: 24 }, (_, i) => i)).toString('base64');
  const newSecret = 'whsec_' + Buffer.from(Array.from({ length: 24 }, (_, i) => i + 24)).toString('base64');
  const id = 'evt_Fx1Yk2Zl3Am4Bn5Co6Dp7Eq8';

  it('builds the body in member order, compact', () => {
    expect(eventBody(id, 'ping', new Date('2026-01-01T00:00:00.000Z'), { endpoint_id: 'we_Gh1Ij2Kl3Mn4Op5Qr6St7Uv8' })).toBe(body);
  });

  it('signs the example as funding.md gives it, before and during a rotation', () => {
    expect(oldSecret).toBe('whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYX');
    expect(newSecret).toBe('whsec_GBkaGxwdHh8gISIjJCUmJygpKissLS4v');
    expect(signatureHeader([oldSecret], id, 1767225600, body)).toBe('v1,iowEXLs4QuMVy5RBDd0bQ1K+zcVBtCYb4wnNWWtlvl4=');
    expect(signatureHeader([newSecret, oldSecret], id, 1767225600, body)).toBe(
      'v1,Z2sJ4xvLB9IZnc0oz0MPZftbt/YwY6ufjQdDzBqDyUs= v1,iowEXLs4QuMVy5RBDd0bQ1K+zcVBtCYb4wnNWWtlvl4=',
    );
  });

  it('is verified by the standardwebhooks reference implementation, with either secret during a rotation', () => {
    const now = Math.floor(Date.now() / 1000);
    const headers = { 'webhook-id': id, 'webhook-timestamp': String(now), 'webhook-signature': signatureHeader([newSecret, oldSecret], id, now, body) };
    expect(new Webhook(newSecret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(oldSecret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).toThrow('No matching signature found');
    expect(() => new Webhook(oldSecret).verify(body.replace('ping', 'pong'), headers)).toThrow('No matching signature found');
  });

  it('makes whsec_ secrets of 24 random bytes', () => {
    const s = newWebhookSecret();
    expect(s).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Buffer.from(s.slice(6), 'base64')).toHaveLength(24);
    expect(newWebhookSecret()).not.toBe(s);
  });
});

describe('sealed webhook secrets', () => {
  it('open only with the same key and endpoint, and never hold the secret in clear', () => {
    const sealed = sealSecret('whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYX', 'we_a', 'k'.repeat(32));
    expect(sealed).toMatch(/^sealed:v1:/);
    expect(sealed).not.toContain('AAECAwQFBgcICQoLDA0ODxAREhMUFRYX');
    expect(openSecret(sealed, 'we_a', 'k'.repeat(32))).toBe('whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYX');
    expect(() => openSecret(sealed, 'we_b', 'k'.repeat(32))).toThrow();
    expect(() => openSecret(sealed, 'we_a', 'j'.repeat(32))).toThrow();
    expect(openSecret(sealSecret('whsec_x', 'we_a', undefined), 'we_a', undefined)).toBe('whsec_x');
  });
});

describe('webhook URL policy', () => {
  const blocked = [
    '0.0.0.0', '10.1.2.3', '100.64.0.1', '127.0.0.1', '169.254.169.254', '172.16.0.1', '172.31.255.255', '192.0.0.8', '192.168.1.1', '198.18.0.1',
    '198.19.255.255', '224.0.0.1', '240.0.0.1', '255.255.255.255', '::', '::1', 'fc00::1', 'fd12::1', 'fe80::1', 'ff02::1', '::ffff:127.0.0.1',
    '::ffff:10.0.0.1', '64:ff9b::7f00:1', '64:ff9b::a00:1', '64:ff9b::a9fe:a9fe',
    // IPv4 documentation, benchmarking and other ranges ipaddr.js does not call unicast.
    '192.0.2.1', '198.51.100.7', '203.0.113.9', '192.88.99.1', '192.175.48.1', '192.52.193.1',
    // IPv4-compatible, the mapped unspecified address, IPv4-translated, local-use NAT64 (/96 and /48 forms), 6to4, Teredo (server or client).
    '::7f00:1', '::a9fe:a9fe', '::ffff:0:0', '::ffff:0:7f00:1', '64:ff9b:1::a9fe:a9fe', '64:ff9b:1::808:808', '64:ff9b:1:7f00:1:0:100::', '2002:7f00:1::1', '2002:a9fe:a9fe::',
    '2001:0:7f00:1::1', '2001:0:808:808::80ff:fffe',
    // Site-local, discard, documentation, benchmarking, ORCHID, outside 2000::/3.
    'fec0::1', '100::1', '2001:db8::1', '2001:2::1', '2001:10::1', '4000::1', '5f00::1',
  ];
  const allowed = [
    '1.1.1.1', '8.8.8.8', '172.32.0.1', '100.128.0.1', '192.0.1.1', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '64:ff9b:1:808:8:800:808:808',
    '2002:808:808::1', '2001:0:808:808::f7f7:f7f7',
  ];
  it.each(blocked)('blocks %s', (address) => expect(isBlockedAddress(address)).toBe(true));
  it.each(allowed)('allows %s', (address) => expect(isBlockedAddress(address)).toBe(false));

  it('checks the URL as WHATWG parsing normalises it', () => {
    expect(checkUrlShape('https://2130706433/hook', false)).toEqual({ ok: false, reason: `url must not point at a private, loopback, link-local or reserved address${PRIVATE_URLS_HINT}` });
    expect(checkUrlShape('https://0x7f.1/hook', false)).toMatchObject({ ok: false });
    expect(checkUrlShape('https://[::ffff:7f00:1]/', false)).toMatchObject({ ok: false });
    expect(checkUrlShape('http://example.com/', false)).toEqual({ ok: false, reason: `url must use https${PRIVATE_URLS_HINT}` });
    expect(checkUrlShape('https://u:p@example.com/', false)).toEqual({ ok: false, reason: 'url must not hold user info' });
    expect(checkUrlShape(`https://example.com/${'a'.repeat(2048)}`, false)).toEqual({ ok: false, reason: 'url must be at most 2048 characters' });
    expect(checkUrlShape('/relative', false)).toEqual({ ok: false, reason: 'url must be an absolute URL such as https://example.com/webhooks' });
    expect(checkUrlShape('https://example.com:8443/x?y=1', false)).toMatchObject({ ok: true, host: 'example.com', literal: false });
    expect(checkUrlShape('http://127.0.0.1:9/', true)).toMatchObject({ ok: true, host: '127.0.0.1', literal: true });
  });

  it('resolves once and refuses a name with any blocked address, or none', async () => {
    const lookup = (answers: Record<string, string[]>) => async (host: string) => answers[host] ?? [];
    await expect(resolveUrl('https://example.com/', false, lookup({ 'example.com': ['93.184.215.14'] }))).resolves.toMatchObject({ ok: true, address: '93.184.215.14' });
    await expect(resolveUrl('https://evil.test/', false, lookup({ 'evil.test': ['93.184.215.14', '127.0.0.1'] }))).resolves.toMatchObject({ ok: false, error: 'blocked_address' });
    await expect(resolveUrl('https://gone.test/', false, lookup({}))).resolves.toMatchObject({ ok: false, error: 'dns_error' });
    await expect(resolveUrl('http://localhost:1/', true, lookup({ localhost: ['127.0.0.1'] }))).resolves.toMatchObject({ ok: true, address: '127.0.0.1' });
  });
});

describe('webhook retry schedule', () => {
  const schedule = [0, 5, 300, 1800, 7200, 18000, 36000, 36000];
  it('waits the schedule with ±10% jitter, lengthened by Retry-After, and ends after the last attempt', () => {
    expect(nextAttemptDelayMs(schedule, 1, null, () => 0)).toBe(4500);
    expect(nextAttemptDelayMs(schedule, 1, null, () => 1)).toBe(5500);
    expect(nextAttemptDelayMs(schedule, 2, null, () => 0.5)).toBe(300_000);
    expect(nextAttemptDelayMs(schedule, 1, 60, () => 0.5)).toBe(60_000);
    expect(nextAttemptDelayMs(schedule, 2, 1, () => 0.5)).toBe(300_000);
    expect(nextAttemptDelayMs(schedule, 7, null, () => 0.5)).toBe(36_000_000);
    expect(nextAttemptDelayMs(schedule, 8, null, () => 0.5)).toBeNull();
  });
  it('reads Retry-After as seconds or an HTTP date', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:01:00 GMT', now)).toBe(60);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter(undefined, now)).toBeNull();
    expect(parseRetryAfter('999999', now)).toBe(86_400);
  });
});
