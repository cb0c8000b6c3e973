import { INVITATION_NOT_FOUND } from '../../src/modules/auth/application/invitations.use-cases';
import { usingPostgres } from '../support/database';
import { OWNER_PASSWORD, bearer, region } from '../support/fixtures';
import { envelope, teamOrg } from '../support/accounts';
import { TestApp, startTestApp } from '../support/test-app';

/**
 * accounts.md's limits under concurrency: one invitation accepted at once by the same user ten
 * times gives one member (the invitation's row is locked), and a user's organizations are counted
 * under a lock on the user (15 creates at once by a user who has 5: exactly 5 succeed). Only
 * PostgreSQL can show a race: the embedded engine runs one transaction at a time.
 */
const describeOnPostgres = usingPostgres() ? describe : describe.skip;
if (!usingPostgres()) {
  console.log('organizations-concurrency.e2e-spec: skipped, needs DATABASE_URL (PostgreSQL); the embedded engine serialises transactions');
}

describeOnPostgres('organizations and invitations under concurrency (PostgreSQL)', () => {
  let t: TestApp;
  const signup = async (email: string): Promise<{ id: string; token: string }> => {
    const res = await t.http.post('/v1/auth/signup').send({ email, password: OWNER_PASSWORD, organization_name: email });
    expect(res.status).toBe(201);
    return { id: res.body.user.id, token: res.body.token };
  };

  beforeAll(async () => {
    t = await startTestApp({ dbPoolSize: 20 });
    await t.seed({ regions: [region()], organizations: [{ ...teamOrg('cc'), api_keys: [] }] });
  });
  afterAll(async () => t?.close());

  it('10 concurrent accepts of one invitation: exactly one member added, one audit entry; the other 9 are 404 with the one message', async () => {
    const owner = (await t.http.post('/v1/auth/login').send({ email: 'owner@cc.test', password: OWNER_PASSWORD })).body.token as string;
    const u = await signup('racer@elsewhere.test');
    const inv = await t.http.post('/v1/invitations').set({ ...bearer(owner), 'X-Org-ID': 'org_cc' }).send({ email: 'racer@elsewhere.test', role: 'developer' });
    expect(inv.status).toBe(201);
    const answers = await Promise.all(Array.from({ length: 10 }, () => t.http.post('/v1/invitations/accept').set(bearer(u.token)).send({ token: inv.body.token })));
    expect(answers.map((r) => r.status).sort()).toEqual([200, ...Array(9).fill(404)]);
    expect(answers.find((r) => r.status === 200)!.body).toEqual({ organization: { id: 'org_cc', name: 'Org cc', role: 'developer' } });
    for (const r of answers.filter((x) => x.status === 404)) expect(r.body).toEqual(envelope(r, 'not_found', INVITATION_NOT_FOUND));
    expect(await t.sql("SELECT role FROM memberships WHERE org_id = 'org_cc' AND user_id = $1", [u.id])).toEqual([{ role: 'developer' }]);
    expect(await t.sql("SELECT count(*)::int AS n FROM audit_log WHERE action = 'invitation.accept' AND actor_id = $1", [u.id])).toEqual([{ n: 1 }]);
  });

  it('15 concurrent organization creates by a user who belongs to 5: exactly 5 succeed, 10 are 409 quota_exceeded', async () => {
    const u = await signup('creator@elsewhere.test');
    for (let i = 2; i <= 5; i++) expect((await t.http.post('/v1/organizations').set(bearer(u.token)).send({ name: `pre ${i}` })).status).toBe(201);
    const answers = await Promise.all(Array.from({ length: 15 }, (_, i) => t.http.post('/v1/organizations').set(bearer(u.token)).send({ name: `race ${i}` })));
    expect(answers.map((r) => r.status).sort()).toEqual([...Array(5).fill(201), ...Array(10).fill(409)]);
    for (const r of answers.filter((x) => x.status === 409)) {
      expect(r.body).toEqual(envelope(r, 'quota_exceeded', 'A user may belong to at most 10 organizations; leave one first', { limit: 10 }));
    }
    expect(await t.sql('SELECT count(*)::int AS n FROM memberships WHERE user_id = $1', [u.id])).toEqual([{ n: 10 }]);
    expect(await t.sql("SELECT count(*)::int AS n FROM organizations WHERE name LIKE 'race %'")).toEqual([{ n: 5 }]);
    const listed = await t.http.get('/v1/organizations').set(bearer(u.token));
    expect(listed.body.organizations).toHaveLength(10);
  });
});
