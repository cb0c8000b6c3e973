import { DeliverWebhooks } from '../../src/modules/webhooks/application/deliver-webhooks.use-case';
import { sealSecret } from '../../src/modules/webhooks/domain/secret-box';
import { PRIVATE_URLS_HINT } from '../../src/modules/webhooks/domain/url-policy';
import { apiToken, bearer, organization, region } from '../support/fixtures';
import { TestApp, startTestApp } from '../support/test-app';
import { WebhookReceiver } from '../support/webhook-receiver';

/**
 * Webhook URLs without WEBHOOK_ALLOW_PRIVATE_URLS (funding.md "URLs"): http, user info, a long
 * URL, every blocked range in each address form (IPv4, the WHATWG-normalised integer and hex
 * forms, IPv6, IPv4-mapped, NAT64), and a name that resolves to 127.0.0.1 are refused at
 * creation and at PATCH with 400 naming url; a URL that became private is refused at the
 * connection (blocked_address), the receiver never reached.
 */
describe('webhook URLs (private addresses refused)', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  const admin = bearer(apiToken('wur', 'hooks'));

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    t = await startTestApp({ webhookAllowPrivateUrls: false });
    const org = organization('wur');
    await t.seed({ regions: [region()], organizations: [{ ...org, api_keys: [{ name: 'hooks', scopes: ['webhooks:write'], token: apiToken('wur', 'hooks') }] }] });
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  const refused = [
    ['http', 'http://example.com/hook', `url must use https${PRIVATE_URLS_HINT}`],
    ['the local receiver over http', `http://127.0.0.1:1/hook`, `url must use https${PRIVATE_URLS_HINT}`],
    ['user info', 'https://user:pass@example.com/hook', 'url must not hold user info'],
    ['a relative URL', '/hook', 'url must be an absolute URL such as https://example.com/webhooks'],
    ['over 2048 characters', `https://example.com/${'a'.repeat(2040)}`, 'url must be at most 2048 characters'],
    ...[
      '0.0.0.0', '10.0.0.1', '100.64.0.1', '127.0.0.1', '169.254.169.254', '172.16.0.1', '192.0.0.1', '192.168.1.1', '198.18.0.1', '224.0.0.1', '240.0.0.1',
      '2130706433', '0x7f000001', '0177.0.0.1', '127.1', '[::]', '[::1]', '[fc00::1]', '[fd00::1]', '[fe80::1]', '[ff02::1]', '[::ffff:127.0.0.1]', '[::ffff:a9fe:a9fe]',
      '[64:ff9b::127.0.0.1]', '[64:ff9b::a00:1]',
      // Only what ipaddr.js calls unicast: IPv4 documentation ranges, IPv4-compatible and the mapped/translated forms, local-use NAT64,
      // 6to4 and Teredo carrying a private address, site-local, discard-only.
      '192.0.2.1', '198.51.100.1', '203.0.113.1', '[::7f00:1]', '[::ffff:0:0]', '[::ffff:0:a9fe:a9fe]', '[64:ff9b:1::a9fe:a9fe]', '[2002:7f00:1::]',
      '[2001:0:a00:1::]', '[fec0::1]', '[100::1]', '[2001:db8::1]',
    ].map((host) => [host, `https://${host}:8443/hook`, `url must not point at a private, loopback, link-local or reserved address${PRIVATE_URLS_HINT}`]),
    ['a name resolving to 127.0.0.1', 'https://localhost/hook', `url's host resolves to a private, loopback, link-local or reserved address${PRIVATE_URLS_HINT}`],
    ['a name that does not resolve', 'https://no-such-host.invalid/hook', "url's host no-such-host.invalid does not resolve"],
  ];

  it.each(refused)('refuses %s at creation, writing nothing', async (_what, url, message) => {
    const res = await t.http.post('/v1/webhook-endpoints').set(admin).send({ url, events: ['*'] });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { code: 'invalid_request', message, details: { field: 'url' }, request_id: res.headers['x-request-id'] } });
    expect(await t.sql("SELECT count(*)::int AS n FROM webhook_endpoints")).toEqual([{ n: 0 }]);
  });

  it('refuses a private URL at PATCH, and at each connection (blocked_address, the receiver never reached)', async () => {
    // An endpoint whose URL is now private (it was written before the rules, or its name's address changed).
    const id = 'we_wurLegacy0000000000000';
    await t.sql(
      `INSERT INTO webhook_endpoints (id, org_id, url, events, status, secret_sealed, created_at, updated_at) VALUES ($1, 'org_wur', $2, '{*}', 'enabled', $3, now(), now())`,
      [id, receiver.url('/private'), sealSecret('whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYX', id, undefined)],
    );
    const patch = await t.http.patch(`/v1/webhook-endpoints/${id}`).set(admin).send({ url: 'https://[::ffff:10.0.0.1]/hook' });
    expect(patch.status).toBe(400);
    expect(patch.body.error).toMatchObject({ code: 'invalid_request', details: { field: 'url' } });
    const ping = await t.http.post(`/v1/webhook-endpoints/${id}/test`).set(admin);
    expect(ping.status).toBe(202);
    await t.app.get(DeliverWebhooks).runUntilIdle();
    expect(receiver.received).toHaveLength(0);
    const deliveries = (await t.http.get(`/v1/webhook-endpoints/${id}/deliveries`).set(admin)).body.deliveries;
    expect(deliveries).toEqual([expect.objectContaining({ id: ping.body.delivery.id, status: 'pending', attempts: 1, last_error: 'blocked_address', last_response_status: null })]);
  });
});
