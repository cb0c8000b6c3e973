import { OWNER_PASSWORD, organization, region } from '../support/fixtures';
import { TestApp, startTestApp } from '../support/test-app';

/**
 * Issue 9, LOW: behind a load balancer every login shared one per-IP bucket and every audit IP
 * was the balancer's. TRUST_PROXY (off by default) makes X-Forwarded-For count, only from the
 * proxies it names.
 */

const loginFrom = (t: TestApp, forwardedFor: string | undefined, password = OWNER_PASSWORD) => {
  const req = t.http.post('/v1/auth/login');
  if (forwardedFor !== undefined) req.set('X-Forwarded-For', forwardedFor);
  return req.send({ email: 'owner@proxy.test', password });
};

const loginAuditIps = async (t: TestApp): Promise<string[]> =>
  (await t.sql<{ ip_address: string }>("SELECT ip_address FROM audit_log WHERE action LIKE 'auth.login%' ORDER BY id")).map((r) => r.ip_address);

describe('TRUST_PROXY=loopback (the test client connects from 127.0.0.1, as a proxy would)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ trustProxy: ['loopback'], rateLimitPerMinute: 2 });
    await t.seed({ regions: [region()], organizations: [organization('proxy')] });
  });
  afterAll(async () => t?.close());

  it('limits login per client address from X-Forwarded-For, and audits that address', async () => {
    const a1 = await loginFrom(t, '203.0.113.7');
    const a2 = await loginFrom(t, '203.0.113.7', 'wrong password');
    const a3 = await loginFrom(t, '203.0.113.7');
    // Another client behind the same proxy has a bucket of its own.
    const b1 = await loginFrom(t, '198.51.100.20, 203.0.113.99');
    expect([a1, a2, a3, b1].map((r) => [r.status, r.headers['x-ratelimit-remaining']])).toEqual([
      [200, '1'],
      [401, '0'],
      [429, '0'],
      [200, '1'],
    ]);
    // The address the proxy saw: the right-most entry not itself a trusted proxy.
    expect(await loginAuditIps(t)).toEqual(['203.0.113.7', '203.0.113.7', '203.0.113.99']);
  });
});

describe('TRUST_PROXY unset (default)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ rateLimitPerMinute: 2 });
    await t.seed({ regions: [region()], organizations: [organization('proxy')] });
  });
  afterAll(async () => t?.close());

  it('ignores X-Forwarded-For: one bucket for the socket address, which the audit log records', async () => {
    const a = await loginFrom(t, '203.0.113.7');
    const b = await loginFrom(t, '198.51.100.20');
    const c = await loginFrom(t, undefined);
    expect([a, b, c].map((r) => [r.status, r.headers['x-ratelimit-remaining']])).toEqual([
      [200, '1'],
      [200, '0'],
      [429, '0'],
    ]);
    expect(await loginAuditIps(t)).toEqual(['127.0.0.1', '127.0.0.1']);
  });
});
