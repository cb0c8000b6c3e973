import { createHash } from 'node:crypto';
import { DomainError } from '../../src/shared/kernel/errors/domain-error';
import { FixedClock } from '../../src/shared/kernel/clock/clock';
import { OWNER_PASSWORD, apiToken, bearer, organization, region } from '../support/fixtures';
import { asyncRefusal } from '../support/assertions';
import { TestApp, startTestApp } from '../support/test-app';
import { IMAGES, SERVER_PLANS, serverRegion } from '../support/servers';
import { ComputeProvider } from '../../src/modules/servers/application/compute-provider.port';
import { VerifyInvariants } from '../../src/modules/verification/application/verify-invariants.use-case';
import { ExpireTerms } from '../../src/modules/terms/application/expire-terms.use-case';
import { AdvanceOperations } from '../../src/modules/operations/application/advance-operations.use-case';
import { exhaustRegionIpv6 } from '../support/region-slots';

const NOW = new Date('2027-01-31T10:00:00.000Z');
const sha256 = (token: string): Buffer => createHash('sha256').update(token).digest();

const refusal = asyncRefusal;

/**
 * The notes of seed-format.md, through the seed use case the CLI runs (LoadSeed), on a real
 * database: existing users, tokens, volume defaults and billing, and all-or-nothing loading.
 */
describe('seed files (seed-format.md notes)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({}, new FixedClock(NOW));
    await t.seed({ regions: [region()], organizations: [organization('first')] });
  });
  afterAll(async () => t?.close());

  it('adds an existing user (email in any case) to the new organization with the role, ignoring the password', async () => {
    const [user] = await t.sql<{ id: string; password_hash: string }>("SELECT id, password_hash FROM users WHERE email = 'owner@first.test'");
    const result = await t.seed({
      regions: [],
      organizations: [
        organization('second', {
          members: [{ email: 'OWNER@First.test', password: 'a different password', role: 'viewer' }],
          api_keys: [],
          servers: [],
          volumes: [],
        }),
      ],
    });
    expect(result).toEqual({
      regions: [],
      server_plans: [],
      images: [],
      templates: [],
      organizations: [{ id: 'org_second', users: [{ id: user.id, email: 'owner@first.test' }], api_keys: [], servers: [], volumes: [] }],
    });
    expect(await t.sql("SELECT user_id, org_id, role FROM memberships WHERE user_id = $1 ORDER BY org_id", [user.id])).toEqual([
      { user_id: user.id, org_id: 'org_first', role: 'owner' },
      { user_id: user.id, org_id: 'org_second', role: 'viewer' },
    ]);
    expect(await t.sql("SELECT id, password_hash FROM users WHERE email = 'owner@first.test'")).toEqual([user]);
    expect(await t.sql("SELECT count(*)::int AS n FROM users WHERE lower(email) = 'owner@first.test'")).toEqual([{ n: 1 }]);

    const old = await t.http.post('/v1/auth/login').send({ email: 'owner@first.test', password: OWNER_PASSWORD });
    expect(old.status).toBe(200);
    expect(old.body.organizations).toEqual([
      { id: 'org_first', name: 'Org first', role: 'owner' },
      { id: 'org_second', name: 'Org second', role: 'viewer' },
    ]);
    expect((await t.http.post('/v1/auth/login').send({ email: 'owner@first.test', password: 'a different password' })).status).toBe(401);
  });

  it('accepts an existing member whose password is short or empty: it is ignored (seed-format.md)', async () => {
    const [user] = await t.sql<{ id: string; password_hash: string }>("SELECT id, password_hash FROM users WHERE email = 'owner@first.test'");
    for (const [suffix, password] of [['shortpw', 'x'], ['emptypw', '']]) {
      const result = await t.seed({
        regions: [],
        organizations: [organization(suffix, { members: [{ email: 'owner@first.test', password, role: 'admin' }], api_keys: [], servers: [], volumes: [] })],
      });
      expect(result.organizations).toEqual([{ id: `org_${suffix}`, users: [{ id: user.id, email: 'owner@first.test' }], api_keys: [], servers: [], volumes: [] }]);
      expect(await t.sql('SELECT role FROM memberships WHERE user_id = $1 AND org_id = $2', [user.id, `org_${suffix}`])).toEqual([{ role: 'admin' }]);
    }
    expect(await t.sql("SELECT id, password_hash FROM users WHERE email = 'owner@first.test'")).toEqual([user]);
  });

  it('refuses a new member whose password is not 8 to 200 characters, naming it, writing nothing', async () => {
    const seed = {
      regions: [],
      organizations: [
        organization('newpw', {
          members: [
            { email: 'owner@first.test', password: 'x', role: 'viewer' },
            { email: 'new@newpw.test', password: 'short', role: 'owner' },
          ],
          api_keys: [],
          servers: [],
          volumes: [],
        }),
      ],
    };
    await expect(refusal(() => t.seed(seed))).resolves.toEqual({
      code: 'invalid_request',
      message: 'Seed file: organizations[0].members[1].password must be 8 to 200 characters (new@newpw.test is a new user)',
    });
    expect(await t.sql("SELECT id FROM organizations WHERE id = 'org_newpw'")).toEqual([]);
    expect(await t.sql("SELECT id FROM users WHERE email = 'new@newpw.test'")).toEqual([]);
  });

  it('uses a given token as it is, generates one otherwise, and lists every token in the output', async () => {
    const given = apiToken('third', 'given');
    const result = await t.seed({
      regions: [],
      organizations: [
        organization('third', {
          members: [],
          api_keys: [
            { name: 'given', scopes: ['vm:read'], token: given },
            { name: 'generated', scopes: ['vm:read', 'vm:write'] },
          ],
          servers: [],
          volumes: [],
        }),
      ],
    });
    const keys = result.organizations[0].api_keys;
    expect(keys).toEqual([
      { id: expect.stringMatching(/^key_[A-Za-z0-9]{20,}$/), name: 'given', token: given },
      { id: expect.stringMatching(/^key_[A-Za-z0-9]{20,}$/), name: 'generated', token: expect.stringMatching(/^cds_live_[A-Za-z0-9]{40}$/) },
    ]);
    expect(await t.sql('SELECT id, name, scopes, token_hash FROM api_keys WHERE org_id = $1 ORDER BY name', ['org_third'])).toEqual([
      { id: keys[1].id, name: 'generated', scopes: ['vm:read', 'vm:write'], token_hash: sha256(keys[1].token) },
      { id: keys[0].id, name: 'given', scopes: ['vm:read'], token_hash: sha256(given) },
    ]);
    for (const key of keys) expect((await t.http.get('/v1/wallet').set(bearer(key.token))).status).toBe(200);
  });

  it('refuses a token without the cds_live_ prefix or with fewer than 32 characters after it, writing nothing', async () => {
    for (const token of ['cds_sess_' + 'a'.repeat(32), 'cds_live_' + 'a'.repeat(31)]) {
      await expect(
        refusal(() => t.seed({ regions: [], organizations: [organization('badkey', { members: [], servers: [], volumes: [], api_keys: [{ name: 'k', scopes: ['vm:read'], token }] })] })),
      ).resolves.toEqual({ code: 'invalid_request', message: 'Seed file: organizations[0].api_keys[0].token must be cds_live_ followed by at least 32 letters or digits' });
    }
    expect(await t.sql("SELECT id FROM organizations WHERE id = 'org_badkey'")).toEqual([]);
  });

  it('prices a volume at the region offer, bills term_months at that price, defaults expires_at to now + term (month end clamped), detaches it without a server', async () => {
    const base = organization('fourth');
    await t.seed({
      regions: [],
      organizations: [
        {
          ...base,
          volumes: [
            // No expires_at: 2027-01-31 + 1 month clamps to 2027-02-28.
            { id: 'vol_fourthidr', name: 'idr', type: 'ssd', region: 'id-jkt', zone: 'id-jkt-a', size_gb: 40, term_months: 1, currency: 'IDR', mount_path: '/ignored' },
            { id: 'vol_fourthusd', name: 'usd', type: 'premium', region: 'id-jkt', zone: 'id-jkt-a', size_gb: 150, term_months: 12, currency: 'USD', server: 'vm_fourthweb1', mount_path: '/mnt/x', note: 'n' },
          ],
        },
      ],
    });
    const ro = bearer(apiToken('fourth', 'rw'));
    const idr = await t.http.get('/v1/volumes/vol_fourthidr').set(ro);
    expect(idr.status).toBe(200);
    expect(idr.body).toEqual({
      id: 'vol_fourthidr', name: 'idr', status: 'available', type: 'ssd', region: 'id-jkt', zone: 'id-jkt-a', size_gb: 40,
      server: null, mount_path: null, mounted: false, term_months: 1,
      // 40 GB × 200 IDR × 1 month
      billing: { currency: 'IDR', amount: '8000' },
      price_per_gb_month: { USD: '0.01250', IDR: '200' },
      expires_at: '2027-02-28T10:00:00.000Z', note: null, labels: {}, delete_protection: false, created_at: expect.any(String), deleted_at: null, deleted_reason: null, suspended_at: null, release_at: null, auto_renew: { enabled: false, term_months: null, last_attempt: null, next_attempt_at: null }, previous_server_id: null,
    });
    const usd = await t.http.get('/v1/volumes/vol_fourthusd').set(ro);
    expect(usd.body).toEqual({
      id: 'vol_fourthusd', name: 'usd', status: 'attached', type: 'premium', region: 'id-jkt', zone: 'id-jkt-a', size_gb: 150,
      server: { id: 'vm_fourthweb1', name: 'web-1' }, mount_path: '/mnt/x', mounted: true, term_months: 12,
      // 150 GB × 0.02000 USD × 12 months
      billing: { currency: 'USD', amount: '36.00000' },
      price_per_gb_month: { USD: '0.02000', IDR: '320' },
      expires_at: '2028-01-31T10:00:00.000Z', note: 'n', labels: {}, delete_protection: false, created_at: expect.any(String), deleted_at: null, deleted_reason: null, suspended_at: null, release_at: null, auto_renew: { enabled: false, term_months: null, last_attempt: null, next_attempt_at: null }, previous_server_id: null,
    });
  });

  it('credits the wallet with the currencies the file names, and only those', async () => {
    await t.seed({ regions: [], organizations: [organization('usdonly', { wallet: { USD: '12.50000' }, members: [], servers: [], volumes: [] })] });
    expect(await t.sql("SELECT currency, available::text, reserved::text FROM wallet_balances WHERE org_id = 'org_usdonly' AND available > 0 ORDER BY currency")).toEqual([
      { currency: 'USD', available: '1250000', reserved: '0' },
    ]);
    expect(await t.sql("SELECT currency, amount::text FROM wallet_ledger WHERE org_id = 'org_usdonly' ORDER BY currency")).toEqual([{ currency: 'USD', amount: '1250000' }]);
  });

  it('writes nothing at all when an id exists already (one transaction), with code conflict', async () => {
    const count = async (): Promise<unknown[]> =>
      t.sql("SELECT (SELECT count(*) FROM organizations)::int AS orgs, (SELECT count(*) FROM users)::int AS users, (SELECT count(*) FROM wallet_ledger)::int AS ledger, (SELECT count(*) FROM api_keys)::int AS keys");
    const before = await count();
    await expect(
      refusal(() => t.seed({ regions: [], organizations: [organization('fifth', { servers: [], volumes: [] }), organization('first', { servers: [], volumes: [] })] })),
    ).resolves.toEqual({ code: 'conflict', message: 'Organization org_first exists already' });
    expect(await count()).toEqual(before);
    expect(await t.sql("SELECT id FROM organizations WHERE id = 'org_fifth'")).toEqual([]);
  });
});

/**
 * terms.md "Seed file": a server with `plan` is a bought one, renewable and expiring like one
 * bought over the API: its instance at the (simulated) compute provider, its vCPUs counted in the
 * region, its price frozen; the bought members without `plan`, or `plan` without them, are refused.
 */
describe('seed files: bought servers (terms.md)', () => {
  let t: TestApp;
  const rw = bearer(apiToken('sbuy', 'rw'));

  beforeAll(async () => {
    t = await startTestApp({}, new FixedClock(NOW));
    await t.seed({ server_plans: SERVER_PLANS, images: IMAGES, regions: [serverRegion('sv-jkt', 4)], organizations: [] });
    await t.seed({
      regions: [],
      organizations: [
        organization('sbuy', {
          wallet: { USD: '100.00000', IDR: '0' },
          volumes: [],
          servers: [
            { id: 'vm_sbuyapp', name: 'app-1', region: 'sv-jkt', zone: 'sv-jkt-a', plan: 'cx2', image: 'debian-12', term_months: 3, currency: 'USD', auto_renew: { enabled: true } },
            { id: 'vm_sbuyold', name: 'old-1', region: 'sv-jkt', zone: 'sv-jkt-a', plan: 'cx1', image: 'ubuntu-24.04', term_months: 1, currency: 'IDR', expires_at: '2027-01-30T10:00:00.000Z' },
            { id: 'vm_sbuyweb', name: 'web-1', region: 'sv-jkt', zone: 'sv-jkt-a' },
          ],
        }),
      ],
    });
  });
  afterAll(async () => t?.close());

  it('shows a bought server as a purchase leaves it: running with its IPv4, the plan, the frozen price, billing for the term, expires_at (default now + term), auto_renew', async () => {
    const res = await t.http.get('/v1/servers/vm_sbuyapp').set(rw);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: 'vm_sbuyapp', name: 'app-1', status: 'running', region: 'sv-jkt', zone: 'sv-jkt-a', plan: 'cx2', vcpus: 2, memory_gb: 4, disk_gb: 80, image: 'debian-12',
      ipv4: expect.stringMatching(/^\d+\.\d+\.\d+\.\d+$/), ipv6: expect.stringMatching(/^2001:db8:[0-9a-f]{1,4}:[0-9a-f]{1,4}::1$/), private_networks: [], reserved_ip: null, term_months: 3,
      // 9.00000 USD × 3 months, at the region offer's price when seeded.
      billing: { currency: 'USD', amount: '27.00000' }, price_per_month: { USD: '9.00000', IDR: '144000' },
      expires_at: '2027-04-30T10:00:00.000Z',
      // Renewed AUTO_RENEW_LEAD_S (3 days) before expires_at.
      auto_renew: { enabled: true, term_months: null, last_attempt: null, next_attempt_at: '2027-04-27T10:00:00.000Z' },
      suspended_at: null, release_at: null, labels: {}, delete_protection: false, volume_ids: [], ssh_key_ids: [],
      created_at: NOW.toISOString(), deleted_at: null, deleted_reason: null,
    });
    // The instance at the compute provider: running, the plan's specs, the same address.
    const instance = await t.app.get(ComputeProvider).getInstance('vm_sbuyapp');
    expect(instance).toMatchObject({ power: 'running', ipv4: res.body.ipv4, vcpus: 2, memoryGb: 4, diskGb: 80, image: 'debian-12' });
    // Both bought servers' vCPUs are counted in the region (2 + 1 of 4); the unbought one counts none.
    expect(await t.sql("SELECT vcpu_capacity::int, vcpus_used::int FROM region_usage WHERE id = 'sv-jkt'")).toEqual([{ vcpu_capacity: 4, vcpus_used: 3 }]);
    // Nothing was charged: the seed's wallet is the balance.
    expect(await t.sql("SELECT currency, available::text, reserved::text FROM wallet_balances WHERE org_id = 'org_sbuy' ORDER BY currency")).toEqual([
      { currency: 'USD', available: '10000000', reserved: '0' },
    ]);
    expect((await t.app.get(VerifyInvariants).execute()).violations).toEqual([]);
  });

  it('renews a bought server at its frozen price, and suspends one whose expires_at has passed (its instance powered off)', async () => {
    const renew = await t.http.post('/v1/servers/vm_sbuyapp/renew').set(rw).set('Idempotency-Key', 'seed-renew-1').send({ term_months: 1 });
    expect(renew.status).toBe(202);
    await t.app.get(AdvanceOperations).runUntilIdle();
    const renewed = await t.http.get('/v1/servers/vm_sbuyapp').set(rw);
    expect([renewed.body.expires_at, renewed.body.billing]).toEqual(['2027-05-30T10:00:00.000Z', { currency: 'USD', amount: '9.00000' }]);
    expect(await t.sql("SELECT available::text FROM wallet_balances WHERE org_id = 'org_sbuy' AND currency = 'USD'")).toEqual([{ available: '9100000' }]);

    await t.app.get(ExpireTerms).execute();
    await t.app.get(AdvanceOperations).runUntilIdle();
    const old = await t.http.get('/v1/servers/vm_sbuyold').set(rw);
    expect(old.body).toMatchObject({ status: 'suspended', suspended_at: NOW.toISOString(), billing: { currency: 'IDR', amount: '72000' }, expires_at: '2027-01-30T10:00:00.000Z' });
    expect(await t.app.get(ComputeProvider).getInstance('vm_sbuyold')).toMatchObject({ power: 'stopped' });
    expect((await t.app.get(VerifyInvariants).execute()).violations).toEqual([]);
  });

  it('refuses the bought members without plan, plan without them, and a plan the region does not sell, naming the member; writes nothing', async () => {
    const server = (extra: Record<string, unknown>) => organization('sbad', { volumes: [], servers: [{ name: 'x-1', region: 'sv-jkt', zone: 'sv-jkt-a', ...extra }] });
    const cases: [Record<string, unknown>, string, string][] = [
      [{ image: 'debian-12' }, 'organizations[0].servers[0].image', 'Seed file: organizations[0].servers[0].image is for a bought server: give its plan too'],
      [{ plan: 'cx1', term_months: 1, currency: 'USD' }, 'organizations[0].servers[0].image', 'Seed file: organizations[0].servers[0].image is required for a bought server (one with plan)'],
      [{ plan: 'cx9', image: 'debian-12', term_months: 1, currency: 'USD' }, 'organizations[0].servers[0].plan', 'Seed file: organizations[0].servers[0].plan: plan cx9 is not sold in sv-jkt'],
      [{ plan: 'cx1', image: 'windows', term_months: 1, currency: 'USD' }, 'organizations[0].servers[0].image', 'Seed file: organizations[0].servers[0].image: image windows is not in the catalog'],
    ];
    for (const [extra, field, message] of cases) {
      const err = await t.seed({ regions: [], organizations: [server(extra)] }).then(() => undefined, (e: DomainError) => e);
      expect(err && { code: err.code, message: err.message, details: err.details }).toEqual({ code: 'invalid_request', message, details: { field } });
    }
    // No room: 3 of 4 vCPUs are taken, a cx2 needs 2.
    await expect(refusal(() => t.seed({ regions: [], organizations: [server({ plan: 'cx2', image: 'debian-12', term_months: 1, currency: 'USD' })] }))).resolves.toMatchObject({ code: 'out_of_stock' });
    expect(await t.sql("SELECT id FROM organizations WHERE id = 'org_sbad'")).toEqual([]);
    expect(await t.sql("SELECT vcpus_used::int FROM region_usage WHERE id = 'sv-jkt'")).toEqual([{ vcpus_used: 3 }]);
    // No IPv6 /64 left in the region's prefix: a server, seeded or bought, is refused as a purchase is (409 out_of_stock), nothing written.
    const giveBack = await exhaustRegionIpv6(t, 'sv-jkt');
    try {
      for (const extra of [{}, { plan: 'cx1', image: 'debian-12', term_months: 1, currency: 'USD' }]) {
        const err = await t.seed({ regions: [], organizations: [server(extra)] }).then(() => undefined, (e: DomainError) => e);
        expect(err && { code: err.code, message: err.message, details: err.details }).toEqual({
          code: 'out_of_stock', message: 'Region sv-jkt has no IPv6 /64 left for a new server; nothing was reserved. Choose another region', details: undefined,
        });
      }
      expect(await t.sql("SELECT id FROM organizations WHERE id = 'org_sbad'")).toEqual([]);
    } finally {
      await giveBack();
    }
  });
});
