import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AdvanceOperations } from '../../src/modules/operations/application/advance-operations.use-case';
import { usingPostgres } from '../support/database';
import { scaled } from '../support/deadlines';
import { apiToken, bearer, orgWithDetachedVolumes, region } from '../support/fixtures';
import { ServerProcess, runCli, startServerProcess, tempDir } from '../support/processes';
import { renewVolumes, sleep } from '../support/renewals';
import { TestApp, startTestApp } from '../support/test-app';

/**
 * GET /v1/operations/{id}?wait=SECONDS and the ETag of an Operation (lifecycle.md "Operations:
 * long-poll and ETag"), on both engines: on PostgreSQL the wake-up is a NOTIFY received on the
 * listening connection, on the embedded engine an event after the commit.
 */
describe('GET /v1/operations/{id}: long-poll and ETag', () => {
  let t: TestApp;
  const ro = bearer(apiToken('lp', 'ro'));
  const org = () => {
    const o = orgWithDetachedVolumes('lp', 20);
    return { ...o, api_keys: [...o.api_keys, { name: 'ro', scopes: ['vm:read'], token: apiToken('lp', 'ro') }] };
  };
  let volume = 0;
  /** A new pending renewal of the next volume: its operation's JSON. */
  const renew = async (): Promise<{ id: string; status: string }> => {
    volume += 1;
    const res = await t.http.post(`/v1/volumes/vol_lpv${volume}/renew`).set(bearer(apiToken('lp', 'rw'))).send({ term_months: 1 });
    expect(res.status).toBe(202);
    return res.body.operation;
  };

  beforeAll(async () => {
    t = await startTestApp();
    await t.seed({ regions: [region()], organizations: [org()] });
  });
  afterAll(async () => t?.close());

  it('answers when the operation ends (woken by its end, not by the wait running out), with the whole succeeded operation', async () => {
    const op = await renew();
    const started = Date.now();
    const waiting = t.http.get(`/v1/operations/${op.id}?wait=20`).set(ro).then((res) => ({ res, at: Date.now() }));
    await sleep(300); // the request is waiting now
    const report = await t.app.get(AdvanceOperations).runOnce();
    const endedAt = Date.now();
    expect(report).toEqual({ claimed: 1, succeeded: 1, failed: 0, skipped: 0 });
    const { res, at } = await waiting;
    expect(res.status).toBe(200);
    const now = await t.http.get(`/v1/operations/${op.id}`).set(ro);
    expect(res.body).toEqual(now.body);
    expect(res.body).toMatchObject({ id: op.id, status: 'succeeded', steps: [{ name: 'renewing', status: 'succeeded' }], error: null });
    expect(res.headers.etag).toBe(now.headers.etag);
    // It waited for the end (not answered at once), and came back because of it: without the
    // wake-up it would answer when the 20 s wait runs out. How soon is a benchmark's figure (the
    // log line), not an assertion: on a loaded machine it varies by tens of milliseconds.
    expect(at - started).toBeGreaterThanOrEqual(300);
    console.log(`long-poll answered ${at - endedAt} ms after the worker's commit returned`);
    expect(at - started).toBeLessThan(scaled(10_000));
  });

  it('?wait=1 with nothing happening: the current state after about a second', async () => {
    const op = await renew();
    const started = Date.now();
    const res = await t.http.get(`/v1/operations/${op.id}?wait=1`).set(ro);
    const took = Date.now() - started;
    expect(res.status).toBe(200);
    expect(res.body).toEqual(op);
    expect(res.headers.etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(took).toBeGreaterThanOrEqual(950);
    expect(took).toBeLessThan(scaled(5000));
    // An operation that has ended answers at once, whatever the wait (far below it: the deadline stretches with the load).
    await t.app.get(AdvanceOperations).runUntilIdle();
    const ended = Date.now();
    const done = await t.http.get(`/v1/operations/${op.id}?wait=60`).set(ro);
    expect(done.status).toBe(200);
    expect(done.body.status).toBe('succeeded');
    expect(Date.now() - ended).toBeLessThan(scaled(5000));
  });

  it.each(['0', '61', '-1', '1.5', 'abc', '', '1e1', ' 5'])('wait=%j is 400 naming wait, nothing waited for', async (wait) => {
    const op = await renew();
    const res = await t.http.get(`/v1/operations/${op.id}`).query({ wait }).set(ro);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: { code: 'invalid_request', message: 'wait must be a whole number of seconds from 1 to 60', request_id: res.headers['x-request-id'], details: { field: 'wait' } },
    });
    await t.app.get(AdvanceOperations).runUntilIdle();
  });

  it('a repeated wait parameter is 400 naming wait', async () => {
    const op = await renew();
    const res = await t.http.get(`/v1/operations/${op.id}?wait=1&wait=2`).set(ro);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_request', details: { field: 'wait' } });
    await t.app.get(AdvanceOperations).runUntilIdle();
  });

  it('404 for another organization\'s or an unknown operation, even with wait', async () => {
    const res = await t.http.get('/v1/operations/op_unknown?wait=5').set(ro);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: { code: 'not_found', message: 'Operation op_unknown not found', request_id: res.headers['x-request-id'], details: {} } });
  });

  it('ETag: If-None-Match with the current one is 304 with no body (counted by the rate limit); a change gives 200 and a new ETag', async () => {
    const op = await renew();
    const first = await t.http.get(`/v1/operations/${op.id}`).set(ro);
    expect(first.status).toBe(200);
    const etag = first.headers.etag;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);

    const same = await t.http.get(`/v1/operations/${op.id}`).set(ro).set('If-None-Match', etag);
    expect(same.status).toBe(304);
    expect(same.text).toBeFalsy();
    expect(same.headers.etag).toBe(etag);
    expect(Number(same.headers['x-ratelimit-remaining'])).toBe(Number(first.headers['x-ratelimit-remaining']) - 1);
    // Weak form and lists match too; another tag does not.
    expect((await t.http.get(`/v1/operations/${op.id}`).set(ro).set('If-None-Match', `"other", W/${etag}`)).status).toBe(304);
    const other = await t.http.get(`/v1/operations/${op.id}`).set(ro).set('If-None-Match', '"other"');
    expect(other.status).toBe(200);
    expect(other.body).toEqual(first.body);

    await t.app.get(AdvanceOperations).runUntilIdle();
    const changed = await t.http.get(`/v1/operations/${op.id}`).set(ro).set('If-None-Match', etag);
    expect(changed.status).toBe(200);
    expect(changed.body.status).toBe('succeeded');
    expect(changed.headers.etag).not.toBe(etag);
    // Long-poll with If-None-Match of the ended state: 304 at once.
    const waited = await t.http.get(`/v1/operations/${op.id}?wait=30`).set(ro).set('If-None-Match', changed.headers.etag);
    expect(waited.status).toBe(304);
  });
});

describe('long-poll in a server process: SIGTERM answers waiting requests at once', () => {
  let t: TestApp | undefined;
  let server: ServerProcess | undefined;
  const dir = tempDir('cds-longpoll-');
  afterAll(async () => {
    await server?.stop('SIGKILL');
    await t?.close();
    dir.remove();
  });

  it('the waiting request gets the current state and the process exits 0', async () => {
    const seed = { regions: [region()], organizations: [orgWithDetachedVolumes('lps', 2)] };
    let env: Record<string, string>;
    if (usingPostgres()) {
      t = await startTestApp();
      await t.seed(seed);
      env = { DATABASE_URL: t.settings.databaseUrl! };
    } else {
      const file = join(dir.path, 'seed.json');
      writeFileSync(file, JSON.stringify(seed));
      env = { DATA_DIR: join(dir.path, 'data') };
      expect(runCli(['seed', file], env).status).toBe(0);
    }
    server = await startServerProcess({ ...env, WORKER_ENABLED: 'false', SHUTDOWN_TIMEOUT_MS: '20000', DEMO_SEED: 'false' });
    expect(await renewVolumes([server.url], 'lps', 0, 1)).toEqual([202]);
    const list = (await (await fetch(`${server.url}/v1/operations`, { headers: bearer(apiToken('lps', 'rw')) })).json()) as { operations: { id: string; status: string }[] };
    const op = list.operations[0];
    expect(op.status).toBe('pending');

    const waiting = fetch(`${server.url}/v1/operations/${op.id}?wait=60`, { headers: bearer(apiToken('lps', 'rw')) }).then(async (res) => ({
      status: res.status,
      body: await res.json(),
      at: Date.now(),
    }));
    await sleep(500);
    const signalled = Date.now();
    const exited = server.stop('SIGTERM');
    const answer = await waiting;
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual(op);
    expect(answer.at - signalled).toBeLessThan(scaled(2000));
    expect(await exited).toBe(0);
    expect(Date.now() - signalled).toBeLessThan(scaled(15000));
  });
});
