import { RetentionPurge } from '../../src/modules/auth/infrastructure/retention-purge';
import { apiToken, bearer, organization, region } from '../support/fixtures';
import { TestApp, startTestApp } from '../support/test-app';

/** auth.login_failed rows (anyone can make the service write one) and unused quotes used to grow forever. */
describe('retention: failed-login rows after 90 days, quotes expired unused after 7 days', () => {
  let t: TestApp;
  const rw = bearer(apiToken('ret', 'rw'));

  beforeAll(async () => {
    t = await startTestApp();
    await t.seed({ regions: [region()], organizations: [organization('ret')] });
  });
  afterAll(async () => t?.close());

  it('deletes what is past its retention and keeps the rest', async () => {
    for (const password of ['wrong one', 'wrong two']) {
      expect((await t.http.post('/v1/auth/login').send({ email: 'owner@ret.test', password })).status).toBe(401);
    }
    const failed = await t.sql<{ id: string }>(`SELECT id::text FROM audit_log WHERE action = 'auth.login_failed' ORDER BY id`);
    expect(failed).toHaveLength(2);
    // Age them (the log refuses updates: the test lifts that for this setup only).
    await t.sql(`ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_update`);
    try {
      await t.sql(`UPDATE audit_log SET created_at = now() - interval '91 days' WHERE id = $1`, [failed[0].id]);
      await t.sql(`UPDATE audit_log SET created_at = now() - interval '89 days' WHERE id = $1`, [failed[1].id]);
    } finally {
      await t.sql(`ALTER TABLE audit_log ENABLE TRIGGER audit_log_no_update`);
    }
    // Still append-only for everything else: a recent failed login, or any other row, cannot be deleted.
    await expect(t.sql(`DELETE FROM audit_log WHERE id = $1`, [failed[1].id])).rejects.toThrow('audit_log is append-only');

    const quotes: string[] = [];
    for (let i = 0; i < 3; i++) {
      const q = await t.http.post('/v1/quotes').set(rw).send({ region: 'id-jkt', size_gb: 100, term_months: 1, currency: 'USD' });
      expect(q.status).toBe(201);
      quotes.push(q.body.id);
    }
    // Expired 8 days ago, expired 6 days ago, still valid.
    await t.sql(`UPDATE quotes SET created_at = now() - interval '8 days', expires_at = now() - interval '8 days' + interval '10 minutes' WHERE id = $1`, [quotes[0]]);
    await t.sql(`UPDATE quotes SET created_at = now() - interval '6 days', expires_at = now() - interval '6 days' + interval '10 minutes' WHERE id = $1`, [quotes[1]]);
    const otherAudit = Number((await t.sql<{ n: string }>(`SELECT count(*) AS n FROM audit_log WHERE action <> 'auth.login_failed'`))[0].n);

    expect(await t.app.get(RetentionPurge).execute()).toEqual({ failedLogins: 1, quotes: 1 });

    expect(await t.sql(`SELECT id::text FROM audit_log WHERE action = 'auth.login_failed'`)).toEqual([{ id: failed[1].id }]);
    expect((await t.sql<{ id: string }>(`SELECT id FROM quotes ORDER BY created_at`)).map((r) => r.id)).toEqual([quotes[1], quotes[2]]);
    expect(Number((await t.sql<{ n: string }>(`SELECT count(*) AS n FROM audit_log WHERE action <> 'auth.login_failed'`))[0].n)).toBe(otherAudit);
    expect(await t.app.get(RetentionPurge).execute()).toEqual({ failedLogins: 0, quotes: 0 });
  });
});
