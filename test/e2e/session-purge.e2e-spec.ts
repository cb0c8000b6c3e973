import { createHash } from 'node:crypto';
import { SchedulerRegistry } from '@nestjs/schedule';
import { PurgeExpiredSessions } from '../../src/modules/auth/application/purge-expired-sessions.use-case';
import { PurgeExpiredSessionsJob } from '../../src/modules/auth/interface/jobs/purge-expired-sessions.job';
import { OWNER_PASSWORD, bearer, organization, region } from '../support/fixtures';
import { TestApp, startTestApp } from '../support/test-app';

/** Issue 9, LOW: sessions were never purged. Expired ones are now deleted hourly. */
describe('purge of expired sessions', () => {
  let t: TestApp;

  beforeAll(async () => {
    // WORKER_ENABLED: the purge runs in processes that run the worker.
    t = await startTestApp({ workerEnabled: true, workerIntervalMs: 3_600_000 });
    await t.seed({ regions: [region()], organizations: [organization('purge')] });
  });
  afterAll(async () => t?.close());

  const login = async (): Promise<string> => {
    const res = await t.http.post('/v1/auth/login').send({ email: 'owner@purge.test', password: OWNER_PASSWORD });
    expect(res.status).toBe(200);
    return res.body.token as string;
  };

  it('is scheduled hourly in a process that runs the worker', () => {
    const scheduler = t.app.get(SchedulerRegistry);
    expect(scheduler.doesExist('interval', 'session-purge')).toBe(true);
  });

  it('deletes sessions whose expiry has passed (revoked or not), keeps live ones (revoked ones until they expire)', async () => {
    const tokens: string[] = [];
    for (let i = 0; i < 4; i++) tokens.push(await login());
    const idOf = async (token: string) =>
      (await t.sql<{ id: string }>('SELECT id FROM sessions WHERE token_hash = $1', [createHash('sha256').update(token).digest()]))[0].id;
    const [expired, expiredRevoked, live, liveRevoked] = await Promise.all(tokens.map(idOf));
    await t.sql("UPDATE sessions SET expires_at = now() - interval '1 second' WHERE id = ANY($1)", [[expired, expiredRevoked]]);
    await t.sql('UPDATE sessions SET revoked_at = now() WHERE id = ANY($1)', [[expiredRevoked, liveRevoked]]);

    await t.app.get(PurgeExpiredSessionsJob).tick();
    expect((await t.sql<{ id: string }>('SELECT id FROM sessions ORDER BY id')).map((r) => r.id)).toEqual([live, liveRevoked].sort());
    expect(await t.app.get(PurgeExpiredSessions).execute()).toBe(0);

    // The live session still works; a purged one answers like any unknown token.
    expect((await t.http.get('/v1/wallet').set(bearer(tokens[2]))).status).toBe(200);
    const purged = await t.http.get('/v1/wallet').set(bearer(tokens[0]));
    expect(purged.status).toBe(401);
    expect(purged.body).toEqual({ error: { code: 'unauthorized', message: 'Invalid token', request_id: purged.headers['x-request-id'], details: {} } });
  });

  it('finds expired sessions through an index (sessions_expires_at_idx)', async () => {
    expect(await t.sql("SELECT indexdef FROM pg_indexes WHERE indexname = 'sessions_expires_at_idx' AND schemaname = current_schema()")).toEqual([
      { indexdef: expect.stringMatching(/ON \S*sessions USING btree \(expires_at\)$/) },
    ]);
  });
});
