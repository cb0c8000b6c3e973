import { usingPostgres } from '../support/database';
import { OWNER_PASSWORD, bearer, region } from '../support/fixtures';
import { teamOrg } from '../support/accounts';
import { TestApp, startTestApp } from '../support/test-app';

/**
 * The account limits under concurrency (lifecycle.md "Accounts"): the 20-key quota and the last
 * owner, each counted under a lock. Only PostgreSQL can show a race: the embedded engine runs one
 * transaction at a time.
 */
const describeOnPostgres = usingPostgres() ? describe : describe.skip;
if (!usingPostgres()) {
  console.log('accounts-concurrency.e2e-spec: skipped, needs DATABASE_URL (PostgreSQL); the embedded engine serialises transactions');
}

describeOnPostgres('accounts under concurrency (PostgreSQL)', () => {
  let t: TestApp;
  const login = async (email: string): Promise<string> => {
    const res = await t.http.post('/v1/auth/login').send({ email, password: OWNER_PASSWORD });
    expect(res.status).toBe(200);
    return res.body.token as string;
  };

  beforeAll(async () => {
    t = await startTestApp({ dbPoolSize: 20 });
    const twoOwners = (suffix: string) => ({
      ...teamOrg(suffix),
      api_keys: [],
      members: [
        { email: `owner1@${suffix}.test`, password: OWNER_PASSWORD, role: 'owner' },
        { email: `owner2@${suffix}.test`, password: OWNER_PASSWORD, role: 'owner' },
      ],
    });
    await t.seed({ regions: [region()], organizations: [{ ...teamOrg('quota'), api_keys: [] }, twoOwners('duel'), twoOwners('leave')] });
  });
  afterAll(async () => t?.close());

  it('20 parallel creates on an organization holding 15 keys: exactly 5 succeed, 15 are 409 quota_exceeded', async () => {
    const owner = { ...bearer(await login('owner@quota.test')), 'X-Org-ID': 'org_quota' };
    for (let i = 0; i < 15; i++) await t.http.post('/v1/api-keys').set(owner).send({ name: `pre${i}`, scopes: ['vm:read'] }).expect(201);
    const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => t.http.post('/v1/api-keys').set(owner).send({ name: `race${i}`, scopes: ['vm:read'] })));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([...Array(5).fill(201), ...Array(15).fill(409)]);
    for (const r of responses.filter((x) => x.status === 409)) {
      expect(r.body.error).toEqual({
        code: 'quota_exceeded',
        message: 'An organization may hold at most 20 active API keys; revoke one first',
        request_id: r.headers['x-request-id'],
        details: { limit: 20 },
      });
    }
    expect(await t.sql("SELECT count(*)::int AS n FROM api_keys WHERE org_id = 'org_quota' AND revoked_at IS NULL")).toEqual([{ n: 20 }]);
    expect(await t.sql("SELECT count(*)::int AS n FROM audit_log WHERE org_id = 'org_quota' AND action = 'api_key.create'")).toEqual([{ n: 20 }]);
  });

  it('two owners demoting each other at the same moment: one succeeds, the other is 409 conflict, one owner is left', async () => {
    const ids = Object.fromEntries(
      (await t.sql<{ id: string; email: string }>("SELECT id, email FROM users WHERE email LIKE 'owner_@duel.test'")).map((r) => [r.email, r.id]),
    );
    const s1 = { ...bearer(await login('owner1@duel.test')), 'X-Org-ID': 'org_duel' };
    const s2 = { ...bearer(await login('owner2@duel.test')), 'X-Org-ID': 'org_duel' };
    for (let round = 0; round < 5; round++) {
      const [a, b] = await Promise.all([
        t.http.patch(`/v1/members/${ids['owner2@duel.test']}`).set(s1).send({ role: 'admin' }),
        t.http.patch(`/v1/members/${ids['owner1@duel.test']}`).set(s2).send({ role: 'admin' }),
      ]);
      const statuses = [a.status, b.status].sort();
      // The loser either found itself no longer an owner (403) or the other the last owner (409).
      expect([[200, 403], [200, 409]]).toContainEqual(statuses);
      const owners = await t.sql<{ user_id: string }>("SELECT user_id FROM memberships WHERE org_id = 'org_duel' AND role = 'owner'");
      expect(owners).toHaveLength(1);
      // Restore two owners for the next round.
      const remaining = owners[0].user_id === ids['owner1@duel.test'] ? s1 : s2;
      const other = owners[0].user_id === ids['owner1@duel.test'] ? ids['owner2@duel.test'] : ids['owner1@duel.test'];
      await t.http.patch(`/v1/members/${other}`).set(remaining).send({ role: 'owner' }).expect(200);
    }
  });

  it('two owners leaving at the same moment: one leaves, the last owner stays (409 conflict)', async () => {
    const ids = Object.fromEntries(
      (await t.sql<{ id: string; email: string }>("SELECT id, email FROM users WHERE email LIKE 'owner_@leave.test'")).map((r) => [r.email, r.id]),
    );
    const s1 = { ...bearer(await login('owner1@leave.test')), 'X-Org-ID': 'org_leave' };
    const s2 = { ...bearer(await login('owner2@leave.test')), 'X-Org-ID': 'org_leave' };
    const [a, b] = await Promise.all([
      t.http.delete(`/v1/members/${ids['owner1@leave.test']}`).set(s1),
      t.http.delete(`/v1/members/${ids['owner2@leave.test']}`).set(s2),
    ]);
    expect([a.status, b.status].sort()).toEqual([204, 409]);
    expect((a.status === 409 ? a : b).body.error.code).toBe('conflict');
    expect(await t.sql("SELECT role FROM memberships WHERE org_id = 'org_leave'")).toEqual([{ role: 'owner' }]);
  });
});
