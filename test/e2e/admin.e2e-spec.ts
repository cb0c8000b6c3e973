import request from 'supertest';
import { adminApi, adminClient, answer as call } from '../support/admin-client';
import type { Client } from '../support/admin-client/generated/client';
import { adminServerOf } from '../../src/app.factory';
import { StaffAccounts } from '../../src/modules/admin/application/staff.use-cases';
import { FixedClock } from '../../src/shared/kernel/clock/clock';
import { apiToken, bearer, organization } from '../support/fixtures';
import { IMAGES, SERVER_PLANS, serverRegion } from '../support/servers';
import { TestApp, startTestApp } from '../support/test-app';

/**
 * The admin API (admin.md) on one app with both listeners: staff tokens and roles, the
 * justification, the staff audit and what the customer sees of it, organizations, wallet
 * adjustments, suspension and limits.
 */
const NOW = '2026-11-22T10:00:00.000Z';

describe('admin API', () => {
  let t: TestApp;
  let admin: ReturnType<typeof request>;
  /** The generated admin client (the admin calls of this file go through it, but for what it cannot send). */
  let client: Client;
  const clock = new FixedClock(new Date(NOW));
  const customer = bearer(apiToken('ad', 'rw'));
  const tokens: Record<string, string> = {};
  const staffIds: Record<string, string> = {};
  let keySeq = 0;
  const key = () => ({ 'Idempotency-Key': `k-${++keySeq}` });
  const as = (role: string) => bearer(tokens[role]);
  const why = { 'X-Justification': 'TICKET-42' };

  beforeAll(async () => {
    t = await startTestApp({ adminPort: 1 }, clock);
    admin = request(adminServerOf(t.app)!);
    client = await adminClient(t);
    await t.seed({
      server_plans: SERVER_PLANS,
      images: IMAGES,
      regions: [serverRegion('id-jkt', 256)],
      organizations: [
        { ...organization('ad'), api_keys: [...organization('ad').api_keys, { name: 'audit', scopes: ['audit:read', 'billing:read', 'vm:read'], token: apiToken('ad', 'audit') }] },
        { ...organization('ae'), api_keys: [...organization('ae').api_keys, { name: 'bill', scopes: ['billing:write'], token: apiToken('ae', 'bill') }] },
        organization('al', { volumes: [], servers: Array.from({ length: 25 }, (_, i) => ({ id: `vm_al${i}`, name: `s-${i}`, region: 'id-jkt', zone: 'id-jkt-a' })) }),
      ],
    });
    const accounts = t.app.get(StaffAccounts);
    for (const role of ['superadmin', 'support', 'billing', 'operator']) {
      const created = await accounts.create({ email: `${role}@staff.test`, name: `Staff ${role}`, role });
      tokens[role] = created.token;
      staffIds[role] = created.staff.id;
    }
  });
  afterAll(async () => t?.close());

  /** Polls `read` until `done` holds or 5 s pass (the staff audit is written once the answer is sent). */
  async function eventually<T>(read: () => Promise<T>, done: (v: T) => boolean): Promise<T> {
    const deadline = Date.now() + 5_000;
    for (;;) {
      const value = await read();
      if (done(value) || Date.now() > deadline) return value;
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  describe('listeners and tokens', () => {
    it('answers admin paths only on the admin listener, and nothing else there', async () => {
      const pub = await t.http.get('/admin/v1/staff').set(as('superadmin'));
      expect(pub.status).toBe(404);
      expect(pub.body).toEqual({ error: { code: 'not_found', message: 'Cannot GET /admin/v1/staff', details: {}, request_id: expect.any(String) } });
      const other = await admin.get('/v1/volumes').set(customer);
      expect(other.status).toBe(404);
      expect(other.body.error.code).toBe('not_found');
    });

    it('refuses a customer token on the admin port and a staff token on the public port (401)', async () => {
      const res = await call(adminApi.listStaff({ client, headers: { ...customer } }));
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: { code: 'unauthorized', message: expect.stringContaining('staff token'), details: {}, request_id: expect.any(String) } });
      expect((await call(adminApi.listStaff({ client }))).status).toBe(401);
      const pub = await t.http.get('/v1/volumes').set(as('support'));
      expect(pub.status).toBe(401);
    });

    it('serves its own OpenAPI document with the admin routes only', async () => {
      const res = await admin.get('/admin/v1/openapi.json');
      expect(res.status).toBe(200);
      const paths = Object.keys(res.body.paths as object);
      expect(paths.length).toBeGreaterThan(3);
      expect(paths.every((p) => p.startsWith('/admin/v1/'))).toBe(true);
      expect(Object.keys(t.document.paths).some((p) => p.startsWith('/admin'))).toBe(false);
    });
  });

  describe('staff', () => {
    it('superadmin creates, lists, changes the role of, and disables staff; others get 403', async () => {
      for (const role of ['support', 'billing', 'operator']) {
        const res = await call(adminApi.listStaff({ client, headers: { ...as(role) } }));
        expect(res.status).toBe(403);
        expect(res.body.error.code).toBe('forbidden');
      }
      const noKey = await call(adminApi.createStaff({ client, headers: { ...as('superadmin') }, body: { email: 'x@staff.test', name: 'X', role: 'support' } }));
      expect(noKey.status).toBe(400);
      expect(noKey.body.error.details).toEqual({ field: 'Idempotency-Key' });
      const k = key();
      const created = await call(adminApi.createStaff({ client, headers: { ...as('superadmin'), ...k }, body: { email: 'Temp@Staff.test', name: 'Temp', role: 'support' } }));
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        staff: { id: expect.stringMatching(/^stf_/), email: 'temp@staff.test', name: 'Temp', role: 'support', created_at: NOW, disabled_at: null },
        token: expect.stringMatching(/^cds_staff_[A-Za-z0-9]{32}$/),
        staff_token: { id: expect.stringMatching(/^stk_/), staff_id: created.body.staff.id, token_prefix: created.body.token.slice(0, 14), created_at: NOW, expires_at: '2027-02-20T10:00:00.000Z', revoked_at: null },
      });
      const replay = await call(adminApi.createStaff({ client, headers: { ...as('superadmin'), ...k }, body: { email: 'Temp@Staff.test', name: 'Temp', role: 'support' } }));
      expect(replay.status).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body.token).toBe(created.body.token);
      const temp = bearer(created.body.token);
      expect((await call(adminApi.searchOrganizations({ client, query: { q: 'org_ad' }, headers: { ...temp } }))).status).toBe(200);

      const patched = await call(adminApi.updateStaff({ client, path: { id: created.body.staff.id }, headers: { ...as('superadmin'), ...key() }, body: { role: 'nobody' } as never }));
      expect(patched.status).toBe(400);
      expect(patched.body.error.details).toEqual({ field: 'role' });
      const disabled = await call(adminApi.disableStaff({ client, path: { id: created.body.staff.id }, headers: { ...as('superadmin'), ...key() } }));
      expect(disabled.status).toBe(200);
      expect(disabled.body.staff.disabled_at).toBe(NOW);
      // Refused within 1 s (the token cache lives at most 1 s).
      const refused = await eventually(() => call(adminApi.searchOrganizations({ client, query: { q: 'org_ad' }, headers: { ...temp } })), (r) => r.status === 401);
      expect(refused.status).toBe(401);
      const [row] = await t.sql<{ n: string }>('SELECT count(*)::text AS n FROM staff_tokens WHERE staff_id = $1', [created.body.staff.id]);
      expect(row.n).toBe('1');
    });
  });

  describe('organizations', () => {
    it('searches by id, name prefix and member email', async () => {
      for (const q of ['org_ad', 'ORG A', 'owner@ad.test']) {
        const res = await call(adminApi.searchOrganizations({ client, query: { q }, headers: { ...as('support') } }));
        expect(res.status).toBe(200);
        const ids = (res.body.organizations as { id: string }[]).map((o) => o.id);
        expect(ids).toContain('org_ad');
        if (q !== 'ORG A') expect(ids).toEqual(['org_ad']);
      }
      const page = await call(adminApi.searchOrganizations({ client, query: { limit: 1 }, headers: { ...as('support') } }));
      expect(page.status).toBe(200);
      expect(page.body).toEqual({ organizations: [{ id: 'org_ad', name: 'Org ad', created_at: expect.any(String), suspended: false }], next_cursor: expect.any(String) });
      const next = await call(adminApi.searchOrganizations({ client, query: { limit: 1, cursor: page.body.next_cursor }, headers: { ...as('support') } }));
      expect(next.body.organizations.map((o: { id: string }) => o.id)).toEqual(['org_ae']);
    });

    it('needs X-Justification to name an organization (400 naming it)', async () => {
      const res = await call(adminApi.getOrganization({ client, path: { id: 'org_ad' }, headers: { ...as('support') } as never }));
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: { code: 'invalid_request', message: expect.stringContaining('X-Justification'), details: { field: 'X-Justification' }, request_id: expect.any(String) } });
      const bad = await call(adminApi.listOrganizationServers({ client, path: { id: 'org_ad' }, headers: { ...as('support'), ...{ 'X-Justification': 'tab\there' } } }));
      expect(bad.status).toBe(400);
    });

    it('shows the detail: members, balances, counts, limits, suspension', async () => {
      const res = await call(adminApi.getOrganization({ client, path: { id: 'org_ad' }, headers: { ...as('support'), ...why } }));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        organization: {
          id: 'org_ad', name: 'Org ad', created_at: expect.any(String), suspended: false, suspended_at: null, suspension_reason: null,
          members: [{ user_id: expect.stringMatching(/^usr_/), email: 'owner@ad.test', role: 'owner', joined_at: expect.any(String) }],
          wallet: { balances: [{ currency: 'IDR', available: '1500000', reserved: '0' }, { currency: 'USD', available: '100.00000', reserved: '0.00000' }] },
          live_servers: 1, live_volumes: 1,
          limits: { servers: 25, api_keys: 20, firewall_rules: 100, overrides: { servers: null, api_keys: null, firewall_rules: null } },
          usage: { servers: 1, api_keys: 2, firewall_rules: 0 },
        },
      });
      expect((await call(adminApi.getOrganization({ client, path: { id: 'org_nope' }, headers: { ...as('support'), ...why } }))).status).toBe(404);
    });

    it("reads an organization's servers in the public shape; the customer sees a staff.access entry with the justification and no name", async () => {
      const res = await call(adminApi.listOrganizationServers({ client, path: { id: 'org_ad' }, headers: { ...as('support'), ...{ 'X-Justification': 'SUP-1234 disk slow' } } }));
      expect(res.status).toBe(200);
      const pub = await t.http.get('/v1/servers').set(customer);
      expect(res.body).toEqual(pub.body);
      expect(res.body.servers.map((s: { id: string }) => s.id)).toEqual(['vm_adweb1']);
      const log = await eventually(
        () => t.http.get('/v1/audit-log?action=staff.access').set(bearer(apiToken('ad', 'audit'))),
        (r) => r.body.entries?.some((e: { data: { route: string } }) => e.data.route === '/admin/v1/organizations/:id/servers'),
      );
      expect(log.status).toBe(200);
      const entry = log.body.entries.find((e: { data: { route: string } }) => e.data.route === '/admin/v1/organizations/:id/servers');
      expect(entry).toEqual({
        id: expect.stringMatching(/^aud_/), created_at: expect.any(String), action: 'staff.access', actor: { type: 'staff', role: 'support' },
        target: { type: 'organization', id: 'org_ad' }, ip: null, request_id: res.headers['x-request-id'], client_request_id: null,
        data: { justification: 'SUP-1234 disk slow', route: '/admin/v1/organizations/:id/servers' },
      });
      expect(JSON.stringify(log.body)).not.toContain('Staff support');
      expect(JSON.stringify(log.body)).not.toContain('support@staff.test');
      // The other organization sees nothing of it.
      const [other] = await t.sql<{ n: string }>("SELECT count(*)::text AS n FROM audit_log WHERE org_id = 'org_ae' AND action = 'staff.access'");
      expect(other.n).toBe('0');
      // The staff audit holds the request (superadmin reads it, filtered by organization).
      const audit = await eventually(
        () => call(adminApi.listStaffAudit({ client, query: { organization_id: 'org_ad', staff_id: staffIds.support }, headers: { ...as('superadmin') } })),
        (r) => r.body.entries?.some((e: { request_id: string }) => e.request_id === res.headers['x-request-id']),
      );
      expect(audit.body.entries.find((e: { request_id: string }) => e.request_id === res.headers['x-request-id'])).toEqual({
        id: expect.stringMatching(/^sau_/), staff_id: staffIds.support, role: 'support', method: 'GET', route: '/admin/v1/organizations/:id/servers',
        organization_id: 'org_ad', target_type: 'organization', target_id: 'org_ad', justification: 'SUP-1234 disk slow', request_id: res.headers['x-request-id'],
        ip: expect.any(String), status: 200, created_at: expect.any(String), changes: null,
      });
      expect((await call(adminApi.listStaffAudit({ client, headers: { ...as('support') } }))).status).toBe(403);
    });

    it('reads volumes, operations, wallet history, top-ups, audit log and webhook endpoints in the public shapes', async () => {
      for (const [path, pub] of [
        ['volumes', '/v1/volumes'],
        ['operations', '/v1/operations'],
        ['wallet/transactions', '/v1/wallet/transactions'],
        ['webhook-endpoints', null],
        ['top-ups', null],
        ['audit-log', null],
      ] as const) {
        const res = await admin.get(`/admin/v1/organizations/org_ad/${path}`).set(as('support')).set(why);
        expect([path, res.status]).toEqual([path, 200]);
        if (pub) expect(res.body).toEqual((await t.http.get(pub).set(customer)).body);
      }
    });
  });

  describe('wallet adjustments', () => {
    const adjust = (role: string, body: object, headers: Record<string, string> = why) => call(adminApi.adjustWallet({ client, path: { id: 'org_ad' }, headers: { ...as(role), ...key(), ...headers } as never, body: body as never }));
    const balances = async () => (await t.sql<{ currency: string; available: string }>("SELECT currency, available::text FROM wallet_balances WHERE org_id = 'org_ad' ORDER BY currency")).map((r) => `${r.currency}:${r.available}`);

    it('is for billing and superadmin only, with a justification and an Idempotency-Key', async () => {
      const body = { currency: 'USD', amount: '5', direction: 'credit', reason: 'Goodwill' };
      for (const role of ['support', 'operator']) {
        const res = await adjust(role, body);
        expect([role, res.status, res.body.error.code]).toEqual([role, 403, 'forbidden']);
      }
      expect((await adjust('billing', body, {})).status).toBe(400);
      const noKey = await call(adminApi.adjustWallet({ client, path: { id: 'org_ad' }, headers: { ...as('billing'), ...why }, body: body as never }));
      expect(noKey.status).toBe(400);
      expect(noKey.body.error.details).toEqual({ field: 'Idempotency-Key' });
      const bad = await adjust('billing', { ...body, direction: 'sideways' });
      expect(bad.status).toBe(400);
      expect(bad.body.error.details).toEqual({ field: 'direction' });
      expect(await balances()).toEqual(['IDR:1500000', 'USD:10000000']);
    });

    it('credits with a reason the customer sees in the wallet history and the audit log; a replay changes nothing', async () => {
      const k = key();
      const body = { currency: 'USD', amount: '12.5', direction: 'credit', reason: 'Goodwill credit for the outage of 2026-11-20', reference: 'SUP-77' };
      const res = await call(adminApi.adjustWallet({ client, path: { id: 'org_ad' }, headers: { ...as('billing'), ...k, ...why }, body: body as never }));
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        adjustment: { id: expect.stringMatching(/^adj_/), organization_id: 'org_ad', currency: 'USD', amount: '12.50000', direction: 'credit', reason: body.reason, reference: 'SUP-77', created_at: expect.any(String) },
        transaction: {
          id: expect.stringMatching(/^wtx_/), type: 'adjustment', currency: 'USD', amount: '12.50000', available_after: '112.50000', reserved_after: '0.00000', source: null,
          operation_id: null, top_up_id: null, created_at: expect.any(String), direction: 'credit', reason: body.reason, adjustment_id: res.body.adjustment.id,
          description: `Credit by support: ${body.reason}`,
        },
        balance: { currency: 'USD', available: '112.50000', reserved: '0.00000' },
      });
      const again = await call(adminApi.adjustWallet({ client, path: { id: 'org_ad' }, headers: { ...as('billing'), ...k, ...why }, body: body as never }));
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(await balances()).toEqual(['IDR:1500000', 'USD:11250000']);
      const history = await t.http.get('/v1/wallet/transactions?type=adjustment').set(customer);
      expect(history.status).toBe(200);
      expect(history.body.transactions).toEqual([res.body.transaction]);
      const log = await t.http.get('/v1/audit-log?action=wallet.adjustment').set(bearer(apiToken('ad', 'audit')));
      expect(log.body.entries).toEqual([
        {
          id: expect.stringMatching(/^aud_/), created_at: expect.any(String), action: 'wallet.adjustment', actor: { type: 'staff', role: 'billing' },
          target: { type: 'wallet_adjustment', id: res.body.adjustment.id }, ip: null, request_id: res.headers['x-request-id'], client_request_id: null,
          data: { currency: 'USD', amount: '12.50000', direction: 'credit', reason: body.reason, reference: 'SUP-77', justification: 'TICKET-42' },
        },
      ]);
    });

    it('debits within available; a debit larger than available is 409 and changes nothing', async () => {
      const before = await t.sql("SELECT count(*)::text AS n FROM wallet_ledger WHERE org_id = 'org_ad'");
      const refused = await adjust('superadmin', { currency: 'USD', amount: '112.50001', direction: 'debit', reason: 'Chargeback' });
      expect(refused.status).toBe(409);
      expect(refused.body).toEqual({
        error: { code: 'conflict', message: expect.stringContaining('larger than the available 112.50000'), details: { field: 'amount', available: '112.50000', currency: 'USD' }, request_id: expect.any(String) },
      });
      expect(await t.sql("SELECT count(*)::text AS n FROM wallet_ledger WHERE org_id = 'org_ad'")).toEqual(before);
      expect(await t.sql('SELECT count(*)::text AS n FROM wallet_adjustments WHERE direction = $1', ['debit'])).toEqual([{ n: '0' }]);
      const ok = await adjust('billing', { currency: 'USD', amount: '2.5', direction: 'debit', reason: 'Duplicate credit reversed' });
      expect(ok.status).toBe(201);
      expect(ok.body.transaction).toMatchObject({ type: 'adjustment', direction: 'debit', amount: '2.50000', available_after: '110.00000' });
      expect(await balances()).toEqual(['IDR:1500000', 'USD:11000000']);
    });
  });

  describe('suspension and limits', () => {
    const buy = (org: string, name: string) =>
      t.http.post('/v1/servers').set(bearer(apiToken(org, 'rw'))).send({ name, region: 'id-jkt', plan: 'cx1', image: 'ubuntu-24.04', term_months: 1, currency: 'USD' });

    it('operator suspends: purchases, actions and top-ups are 403 organization_suspended, reads work; unsuspend restores', async () => {
      for (const role of ['support', 'billing']) {
        const res = await call(adminApi.suspendOrganization({ client, path: { id: 'org_ae' }, headers: { ...as(role), ...key(), ...why }, body: { reason: 'Abuse' } }));
        expect([role, res.status]).toEqual([role, 403]);
      }
      const res = await call(adminApi.suspendOrganization({ client, path: { id: 'org_ae' }, headers: { ...as('operator'), ...key(), ...why }, body: { reason: 'Abuse report SUP-99' } }));
      expect(res.status).toBe(200);
      expect(res.body.organization).toMatchObject({ id: 'org_ae', suspended: true, suspended_at: NOW, suspension_reason: 'Abuse report SUP-99' });
      const rw = bearer(apiToken('ae', 'rw'));
      const refused = [
        await buy('ae', 'web-9'),
        await t.http.post('/v1/servers/vm_aeweb1/reboot').set(rw),
        await t.http.post('/v1/wallet/top-ups').set(bearer(apiToken('ae', 'bill'))).send({ currency: 'USD', amount: '10' }),
        await t.http.patch('/v1/volumes/vol_aedata1').set(rw).send({ name: 'x' }),
      ];
      for (const r of refused) {
        expect(r.status).toBe(403);
        expect(r.body.error).toEqual({ code: 'forbidden', message: expect.stringContaining('suspended'), details: { reason: 'organization_suspended' }, request_id: expect.any(String) });
      }
      expect((await t.http.get('/v1/servers').set(rw)).status).toBe(200);
      expect((await t.http.get('/v1/volumes/vol_aedata1').set(rw)).status).toBe(200);
      // Other organizations are untouched.
      expect((await t.http.patch('/v1/volumes/vol_addata1').set(customer).send({ note: 'fine' })).status).toBe(200);
      const log = await t.sql<{ action: string; actor_type: string; actor_id: string; data: Record<string, unknown> }>(
        "SELECT action, actor_type, actor_id, data FROM audit_log WHERE org_id = 'org_ae' AND action LIKE 'organization.%'",
      );
      expect(log).toEqual([{ action: 'organization.suspend', actor_type: 'staff', actor_id: 'operator', data: { reason: 'Abuse report SUP-99', justification: 'TICKET-42' } }]);
      const lifted = await call(adminApi.unsuspendOrganization({ client, path: { id: 'org_ae' }, headers: { ...as('operator'), ...key(), ...why } }));
      expect(lifted.status).toBe(200);
      expect(lifted.body.organization).toMatchObject({ suspended: false, suspended_at: null, suspension_reason: null });
      expect((await t.http.patch('/v1/volumes/vol_aedata1').set(rw).send({ note: 'back' })).status).toBe(200);
    });

    it('limits: 409 below what is in use, 400 naming a bad field; a raised server limit lets a 26th server be bought, null restores 25', async () => {
      const put = (role: string, body: object) => call(adminApi.setOrganizationLimits({ client, path: { id: 'org_al' }, headers: { ...as(role), ...key(), ...why }, body: body }));
      expect((await put('billing', { servers: 30 })).status).toBe(403);
      const bad = await put('operator', { servers: -1 });
      expect(bad.status).toBe(400);
      expect(bad.body.error.details).toEqual({ field: 'servers' });
      const below = await put('operator', { servers: 24 });
      expect(below.status).toBe(409);
      expect(below.body.error).toMatchObject({ code: 'conflict', details: { field: 'servers', in_use: 25 } });
      const full = await buy('al', 'web-26');
      expect(full.status).toBe(409);
      expect(full.body.error).toMatchObject({ code: 'quota_exceeded', details: { limit: 25 } });
      const raised = await put('operator', { servers: 26, api_keys: 3 });
      expect(raised.status).toBe(200);
      expect(raised.body.organization.limits).toEqual({ servers: 26, api_keys: 3, firewall_rules: 100, overrides: { servers: 26, api_keys: 3, firewall_rules: null } });
      const bought = await buy('al', 'web-26');
      expect(bought.status).toBe(202);
      const over = await buy('al', 'web-27');
      expect(over.status).toBe(409);
      expect(over.body.error).toMatchObject({ code: 'quota_exceeded', details: { limit: 26 } });
      expect((await put('operator', { servers: null })).status).toBe(409);
      const restored = await put('superadmin', { api_keys: null });
      expect(restored.body.organization.limits.api_keys).toBe(20);
    });
  });

  describe('operations and verify', () => {
    it('lists operations across organizations with filters; verify as JSON for operators only, and sound after everything above', async () => {
      const all = await call(adminApi.listAllOperations({ client, query: { type: 'vm.create' }, headers: { ...as('support') } }));
      expect(all.status).toBe(200);
      expect(all.body.operations.map((o: { organization_id: string }) => o.organization_id)).toContain('org_al');
      expect(all.body.operations[0]).toEqual({
        id: expect.stringMatching(/^op_/), organization_id: 'org_al', type: 'vm.create', status: 'pending', created_at: NOW, finished_at: null, error: null,
      });
      const none = await call(adminApi.listAllOperations({ client, query: { organization_id: 'org_ae', status: 'failed' }, headers: { ...as('support') } }));
      expect(none.body).toEqual({ operations: [], next_cursor: null });
      expect((await call(adminApi.listAllOperations({ client, query: { status: 'lost' as never }, headers: { ...as('support') } }))).body.error.details).toEqual({ field: 'status' });
      expect((await call(adminApi.verifyInvariants({ client, headers: { ...as('support') } }))).status).toBe(403);
      const report = await call(adminApi.verifyInvariants({ client, headers: { ...as('operator') } }));
      expect(report.status).toBe(200);
      expect(report.body.violations).toEqual([]);
      expect(report.body.ok).toBe(true);
      expect(report.body.checks.map((c: { name: string }) => c.name)).toContain('wallet.adjustments_once');
    });
  });
});
