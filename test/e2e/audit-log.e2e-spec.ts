import { scaled } from '../support/deadlines';
import type { Response } from 'supertest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { AuditTrail } from '../../src/modules/audit/application/audit-trail.port';
import { encodeAuditCursor } from '../../src/modules/audit/domain/audit-log';
import { TypeOrmAuditLogReader } from '../../src/modules/audit/infrastructure/typeorm-audit-trail';
import type { Db } from '../../src/shared/database/transaction';
import { UnitOfWork } from '../../src/shared/database/unit-of-work';
import { AUD_ID, ISO, envelope, teamOrg, teamSeed } from '../support/accounts';
import { createTestDatabase, usingPostgres } from '../support/database';
import { OWNER_PASSWORD, apiToken, bearer, region } from '../support/fixtures';
import { runCli, startServerProcess, tempDir } from '../support/processes';
import { TestApp, startTestApp } from '../support/test-app';

interface Entry {
  id: string;
  created_at: string;
  action: string;
  actor: { type: string; id: string | null; email?: string | null; name?: string | null };
  target: { type: string; id: string } | null;
  ip: string | null;
  request_id: string | null;
  client_request_id: string | null;
  data: Record<string, unknown>;
}

/** The form of the server's own request ids. */
const REQ_ID = /^req_[A-Za-z0-9]{20,}$/;

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  'Recheck Cond'?: string;
  Plans?: PlanNode[];
}
const planNodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(planNodes)];

/** lifecycle.md "Audit log": GET /v1/audit-log, its filters, pages, entry shape; append-only in the database. */
describe('GET /v1/audit-log', () => {
  let t: TestApp;
  let owner: Record<string, string>;
  let ownerId: string;

  const login = async (email: string): Promise<string> => {
    const res = await t.http.post('/v1/auth/login').send({ email, password: OWNER_PASSWORD });
    expect(res.status).toBe(200);
    return res.body.token as string;
  };
  const list = async (query: string, who = owner): Promise<{ entries: Entry[]; next_cursor: string | null }> => {
    const res = await t.http.get(`/v1/audit-log${query}`).set(who);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['entries', 'next_cursor']);
    return res.body;
  };
  /** Every entry matching `query`, page by page. */
  const walk = async (query: string, limit: number): Promise<Entry[]> => {
    const out: Entry[] = [];
    let cursor: string | null = null;
    do {
      const page = await list(`?limit=${limit}${query}${cursor ? `&cursor=${cursor}` : ''}`);
      out.push(...page.entries);
      cursor = page.next_cursor;
    } while (cursor);
    return out;
  };
  /** Audit rows written straight through the port, `perTx` per transaction, as the use cases write them. */
  const record = async (orgId: string, n: number, perTx = 10, action = 'test.bulk'): Promise<void> => {
    const uow = t.app.get(UnitOfWork);
    const audit = t.app.get(AuditTrail);
    for (let i = 0; i < n; i += perTx) {
      await uow.run(async () => {
        for (let j = i; j < Math.min(n, i + perTx); j++) {
          await audit.record({ orgId, actorType: 'system', actorId: null, action, targetId: null, ipAddress: null, data: { n: j } });
        }
      });
    }
  };

  beforeAll(async () => {
    t = await startTestApp();
    await t.seed(teamSeed('f', 'g', 'p'));
    owner = { ...bearer(await login('owner@f.test')), 'X-Org-ID': 'org_f' };
    [{ id: ownerId }] = await t.sql<{ id: string }>("SELECT id FROM users WHERE email = 'owner@f.test'");
  });
  afterAll(async () => t?.close());

  it('shows sign-ins, key and member changes with actor, target, IP and request id, newest first; the token and password never', async () => {
    const from = new Date(Date.now() - 1000).toISOString();
    const created = await t.http.post('/v1/api-keys').set(owner).set('X-Request-Id', 'req-audit-create').send({ name: 'deploy', scopes: ['vm:read'] });
    const key = created.body.api_key;
    // The new key does something audited? Keys cannot manage accounts; a session revokes it.
    await t.http.delete(`/v1/api-keys/${key.id}`).set(owner).set('X-Request-Id', 'req-audit-revoke').expect(204);
    const page = await list(`?since=${from}`);
    expect(page.entries.slice(0, 2)).toEqual([
      {
        id: expect.stringMatching(AUD_ID),
        created_at: expect.stringMatching(ISO),
        action: 'api_key.revoke',
        actor: { type: 'user', id: ownerId, email: 'owner@f.test' },
        target: { type: 'api_key', id: key.id },
        ip: '127.0.0.1',
        request_id: expect.stringMatching(REQ_ID),
        client_request_id: 'req-audit-revoke',
        data: { name: 'deploy' },
      },
      {
        id: expect.stringMatching(AUD_ID),
        created_at: expect.stringMatching(ISO),
        action: 'api_key.create',
        actor: { type: 'user', id: ownerId, email: 'owner@f.test' },
        target: { type: 'api_key', id: key.id },
        ip: '127.0.0.1',
        request_id: expect.stringMatching(REQ_ID),
        client_request_id: 'req-audit-create',
        data: { name: 'deploy', scopes: ['vm:read'], expires_at: null },
      },
    ]);
    // The login of beforeAll, with its session as target.
    const logins = await list('?action=auth.login');
    expect(logins.entries[0]).toEqual({
      id: expect.stringMatching(AUD_ID),
      created_at: expect.stringMatching(ISO),
      action: 'auth.login',
      actor: { type: 'user', id: ownerId, email: 'owner@f.test' },
      target: { type: 'session', id: expect.stringMatching(/^ses_/) },
      ip: '127.0.0.1',
      request_id: expect.stringMatching(REQ_ID),
      client_request_id: null,
      data: {},
    });
    const everything = JSON.stringify(await t.sql('SELECT * FROM audit_log'));
    expect(everything).not.toContain(created.body.token.slice(13));
    expect(everything).not.toContain(OWNER_PASSWORD);
  });

  it("records the server's own request id, unique per request, beside the client's X-Request-Id, which the response still echoes", async () => {
    const from = new Date(Date.now() - 1000).toISOString();
    // Two requests sending the same X-Request-Id.
    const first = await t.http.post('/v1/api-keys').set(owner).set('X-Request-Id', 'same-client-id').send({ name: 'twin-1', scopes: ['vm:read'] });
    const second = await t.http.post('/v1/api-keys').set(owner).set('X-Request-Id', 'same-client-id').send({ name: 'twin-2', scopes: ['vm:read'] });
    expect([first.status, second.status]).toEqual([201, 201]);
    expect([first.headers['x-request-id'], second.headers['x-request-id']]).toEqual(['same-client-id', 'same-client-id']);
    // An invalid X-Request-Id (a space) counts as none, and so does no header at all.
    const invalid = await t.http.post('/v1/api-keys').set(owner).set('X-Request-Id', 'not valid').send({ name: 'twin-3', scopes: ['vm:read'] });
    const none = await t.http.post('/v1/api-keys').set(owner).send({ name: 'twin-4', scopes: ['vm:read'] });
    expect([invalid.status, none.status]).toEqual([201, 201]);
    expect(invalid.headers['x-request-id']).toMatch(REQ_ID);
    expect(none.headers['x-request-id']).toMatch(REQ_ID);
    expect(invalid.headers['x-request-id']).not.toBe(none.headers['x-request-id']);

    const mine = new Set([first, second, invalid, none].map((r) => r.body.api_key.id));
    const entries = (await list(`?action=api_key.create&since=${from}`)).entries.filter((e) => mine.has(e.target?.id)).reverse();
    const entry = (keyId: string) => ({
      id: expect.stringMatching(AUD_ID),
      created_at: expect.stringMatching(ISO),
      action: 'api_key.create',
      actor: { type: 'user', id: ownerId, email: 'owner@f.test' },
      target: { type: 'api_key', id: keyId },
      ip: '127.0.0.1',
      data: expect.objectContaining({ scopes: ['vm:read'] }),
    });
    expect(entries).toEqual([
      { ...entry(first.body.api_key.id), request_id: expect.stringMatching(REQ_ID), client_request_id: 'same-client-id' },
      { ...entry(second.body.api_key.id), request_id: expect.stringMatching(REQ_ID), client_request_id: 'same-client-id' },
      // Without a valid one, the id generated for the response is the server's own id.
      { ...entry(invalid.body.api_key.id), request_id: invalid.headers['x-request-id'], client_request_id: null },
      { ...entry(none.body.api_key.id), request_id: none.headers['x-request-id'], client_request_id: null },
    ]);
    const ids = entries.map((e) => e.request_id);
    expect(new Set(ids).size).toBe(4);
    expect(ids).not.toContain('same-client-id');
    // An error's request_id stays the echoed X-Request-Id.
    const refused = await t.http.post('/v1/api-keys').set(owner).set('X-Request-Id', 'same-client-id').send({ name: '', scopes: ['vm:read'] });
    expect(refused.status).toBe(400);
    expect(refused.headers['x-request-id']).toBe('same-client-id');
    expect(refused.body.error.request_id).toBe('same-client-id');
    // And in the table, the same two columns.
    expect(await t.sql("SELECT request_id, client_request_id FROM audit_log WHERE org_id = 'org_f' AND client_request_id = 'same-client-id' ORDER BY seq")).toEqual([
      { request_id: entries[0].request_id, client_request_id: 'same-client-id' },
      { request_id: entries[1].request_id, client_request_id: 'same-client-id' },
    ]);
    for (const e of entries) await t.http.delete(`/v1/api-keys/${e.target!.id}`).set(owner).expect(204);
  });

  it('an API key as actor shows its name; a renewal through it is audited in the same transaction', async () => {
    const token = apiToken('f', 'rw');
    const res = await t.http.post('/v1/volumes/vol_fdata1/renew').set(bearer(token)).send({ term_months: 1 });
    expect(res.status).toBe(202);
    const [entry] = (await list('?action=volume.*&limit=1')).entries;
    const [{ id: keyId }] = await t.sql<{ id: string }>("SELECT id FROM api_keys WHERE org_id = 'org_f' AND name = 'ci'");
    expect(entry).toEqual({
      id: expect.stringMatching(AUD_ID),
      created_at: expect.stringMatching(ISO),
      action: 'volume.renew',
      actor: { type: 'api_key', id: keyId, name: 'ci' },
      target: { type: 'volume', id: 'vol_fdata1' },
      ip: '127.0.0.1',
      request_id: res.headers['x-request-id'],
      client_request_id: null,
      data: expect.objectContaining({ operation_id: res.body.operation.id }),
    });
  });

  it('answers each filter: action exact and prefix, actor_id, target_id, since, until, limit', async () => {
    await t.seed({ regions: [], organizations: [{ ...teamOrg('h'), api_keys: [] }] });
    const h = { ...bearer(await login('owner@h.test')), 'X-Org-ID': 'org_h' };
    const admin = { ...bearer(await login('admin@h.test')), 'X-Org-ID': 'org_h' };
    const [{ id: adminId }] = await t.sql<{ id: string }>("SELECT id FROM users WHERE email = 'admin@h.test'");
    const k1 = (await t.http.post('/v1/api-keys').set(h).send({ name: 'k1', scopes: ['vm:read'] })).body.api_key.id;
    await new Promise((r) => setTimeout(r, 20));
    const middle = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 20));
    const k2 = (await t.http.post('/v1/api-keys').set(admin).send({ name: 'k2', scopes: ['vm:read'] })).body.api_key.id;
    await t.http.delete(`/v1/api-keys/${k1}`).set(admin).expect(204);
    const get = async (q: string) => (await list(q, h)).entries.map((e) => `${e.action}:${e.target?.id ?? ''}`);

    expect(await get('?action=api_key.*')).toEqual([`api_key.revoke:${k1}`, `api_key.create:${k2}`, `api_key.create:${k1}`]);
    expect(await get('?action=api_key.create')).toEqual([`api_key.create:${k2}`, `api_key.create:${k1}`]);
    expect(await get(`?actor_id=${adminId}&action=api_key.*`)).toEqual([`api_key.revoke:${k1}`, `api_key.create:${k2}`]);
    expect(await get(`?target_id=${k1}`)).toEqual([`api_key.revoke:${k1}`, `api_key.create:${k1}`]);
    expect(await get(`?action=api_key.*&since=${middle}`)).toEqual([`api_key.revoke:${k1}`, `api_key.create:${k2}`]);
    expect(await get(`?action=api_key.*&until=${middle}`)).toEqual([`api_key.create:${k1}`]);
    expect(await get('?action=api_key.*&limit=1')).toEqual([`api_key.revoke:${k1}`]);
    expect(await get('?action=api.*')).toEqual([]);
    expect(await get('?action=nothing.here')).toEqual([]);
    const both = await list('?action=auth.*', h);
    expect(new Set(both.entries.map((e) => e.action))).toEqual(new Set(['auth.login']));
  });

  it('refuses bad parameters with 400 naming each', async () => {
    const cases: [string, string, string][] = [
      ['limit=0', 'limit', 'limit must be a whole number from 1 to 100'],
      ['limit=101', 'limit', 'limit must be a whole number from 1 to 100'],
      ['limit=ten', 'limit', 'limit must be a whole number from 1 to 100'],
      ['cursor=bogus', 'cursor', 'cursor is not a valid cursor; pass the next_cursor of a previous page'],
      [`cursor=${Buffer.from('c1|2026-01-01T00:00:00.000000Z|x').toString('base64url')}`, 'cursor', 'cursor is not a valid cursor; pass the next_cursor of a previous page'],
      ['action=volume.', 'action', 'action must be an action such as api_key.create, or a prefix ending in .* such as volume.*'],
      ['action=*', 'action', 'action must be an action such as api_key.create, or a prefix ending in .* such as volume.*'],
      ['action=a%25b', 'action', 'action must be an action such as api_key.create, or a prefix ending in .* such as volume.*'],
      ['actor_id=a%20b', 'actor_id', 'actor_id must be an id (1 to 128 of A-Z a-z 0-9 _ . -)'],
      ['target_id=', 'target_id', 'target_id must be an id (1 to 128 of A-Z a-z 0-9 _ . -)'],
      ['since=yesterday', 'since', 'since must be an ISO 8601 timestamp such as 2026-11-21T10:00:00Z'],
      ['until=2026-13-45T00:00:00Z', 'until', 'until must be an ISO 8601 timestamp such as 2026-11-21T10:00:00Z'],
      ['since=2026-01-01', 'since', 'since must be an ISO 8601 timestamp such as 2026-11-21T10:00:00Z'],
      ['action=a&action=b', 'action', 'action must be a string'],
    ];
    for (const [q, field, message] of cases) {
      const res = await t.http.get(`/v1/audit-log?${q}`).set(owner);
      expect({ q, status: res.status, body: res.body }).toEqual({ q, status: 400, body: envelope(res, 'invalid_request', message, { field }) });
    }
  });

  it("never shows another organization's entries, nor failed logins of unknown emails", async () => {
    await t.http.post('/v1/auth/login').send({ email: 'ghost@nowhere.test', password: 'whatever it is' }).expect(401);
    const g = { ...bearer(await login('owner@g.test')), 'X-Org-ID': 'org_g' };
    await t.http.post('/v1/api-keys').set(g).send({ name: 'g-only', scopes: ['vm:read'] }).expect(201);
    const ofF = await walk('', 100);
    const idsOfF = new Set((await t.sql<{ public_id: string }>("SELECT public_id FROM audit_log WHERE org_id = 'org_f'")).map((r) => r.public_id));
    expect(ofF.length).toBe(idsOfF.size);
    for (const e of ofF) expect(idsOfF.has(e.id)).toBe(true);
    expect(JSON.stringify(ofF)).not.toContain('g-only');
    expect(JSON.stringify(ofF)).not.toContain('auth.login_failed');
    // X-Org-ID picks the log: the owner of f is not a member of g.
    expect((await t.http.get('/v1/audit-log').set(bearer(owner.Authorization.slice(7))).set('X-Org-ID', 'org_g')).status).toBe(403);
  });

  it('pages through 1,000 entries without a duplicate or a gap while new entries are being written', async () => {
    await record('org_p', 1000, 25);
    let writing = true;
    let written = 0;
    const writer = (async () => {
      while (writing) {
        await record('org_p', 3, 3, 'test.concurrent');
        written += 3;
      }
    })();
    const p = { ...bearer(await login('owner@p.test')), 'X-Org-ID': 'org_p' };
    const walked: Entry[] = [];
    let cursor: string | null = null;
    try {
      do {
        const res: Response = await t.http.get(`/v1/audit-log?limit=37${cursor ? `&cursor=${cursor}` : ''}`).set(p);
        expect(res.status).toBe(200);
        walked.push(...res.body.entries);
        cursor = res.body.next_cursor;
      } while (cursor);
    } finally {
      writing = false;
      await writer;
    }
    expect(written).toBeGreaterThan(0);
    // The final log, read at rest: the walk is exactly its tail from the walk's first entry on.
    const all: Entry[] = [];
    cursor = null;
    do {
      const res: Response = await t.http.get(`/v1/audit-log?limit=100${cursor ? `&cursor=${cursor}` : ''}`).set(p);
      all.push(...res.body.entries);
      cursor = res.body.next_cursor;
    } while (cursor);
    const ids = walked.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    const start = all.findIndex((e) => e.id === ids[0]);
    expect(start).toBeGreaterThanOrEqual(0);
    expect(ids).toEqual(all.slice(start).map((e) => e.id));
    expect(walked.filter((e) => e.action === 'test.bulk')).toHaveLength(1000);
    expect(all.length).toBe((await t.sql<{ n: number }>("SELECT count(*)::int AS n FROM audit_log WHERE org_id = 'org_p'"))[0].n);
  });

  (usingPostgres() ? it : it.skip)('(PostgreSQL) entries commit in log order: a later writer waits for an open one, and a reader paging meanwhile skips nothing', async () => {
    await record('org_g', 10);
    const g = { ...bearer(await login('owner@g.test')), 'X-Org-ID': 'org_g' };
    const first = (await t.http.get('/v1/audit-log?limit=1').set(g)).body.entries[0] as Entry;
    const slow = new Client({ connectionString: t.settings.databaseUrl });
    await slow.connect();
    try {
      await slow.query('BEGIN');
      // The adapter's statement: its trigger takes the next seq of org_g, locking its counter until COMMIT.
      await slow.query(`INSERT INTO audit_log (public_id, org_id, actor_type, action) VALUES ('aud_slowslowslowslowslow1', 'org_g', 'system', 'test.slow')`);
      let fastDone = false;
      const fast = record('org_g', 5, 1, 'test.fast').then(() => (fastDone = true));
      await new Promise((r) => setTimeout(r, 300));
      expect(fastDone).toBe(false);
      const page1 = await t.http.get('/v1/audit-log?limit=3').set(g);
      expect(page1.body.entries[0].id).toBe(first.id);
      await slow.query('COMMIT');
      await fast;
      const walked: Entry[] = [...page1.body.entries];
      let cursor = page1.body.next_cursor as string | null;
      while (cursor) {
        const res: Response = await t.http.get(`/v1/audit-log?limit=50&cursor=${cursor}`).set(g);
        walked.push(...res.body.entries);
        cursor = res.body.next_cursor;
      }
      const top = await t.http.get('/v1/audit-log?limit=7').set(g);
      expect(top.body.entries.map((e: Entry) => e.action)).toEqual(['test.fast', 'test.fast', 'test.fast', 'test.fast', 'test.fast', 'test.slow', first.action]);
      expect(top.body.entries[6].id).toBe(first.id);
      const full: Entry[] = [];
      cursor = null;
      do {
        const res: Response = await t.http.get(`/v1/audit-log?limit=100${cursor ? `&cursor=${cursor}` : ''}`).set(g);
        full.push(...res.body.entries);
        cursor = res.body.next_cursor;
      } while (cursor);
      expect(walked.map((e) => e.id)).toEqual(full.slice(6).map((e) => e.id));
    } finally {
      await slow.end();
    }
  });

  it('every filter combination: the answer of a plain query, served by indexes (no Seq Scan; since and until as seq bounds of audit_log_org_created_idx)', async () => {
    await t.seed({ regions: [], organizations: [{ ...teamOrg('x'), api_keys: [] }] });
    const x = { ...bearer(await login('owner@x.test')), 'X-Org-ID': 'org_x' };
    // 3,000 entries an hour apart, 20 that try to be recorded a day in the past (the trigger stamps
    // them with the latest time: ties), 1,000 more an hour apart.
    const bulk = (from: number, n: number, at: string) =>
      t.sql(
        `INSERT INTO audit_log (public_id, org_id, actor_type, actor_id, action, target_type, target_id, data, created_at)
         SELECT 'aud_x' || lpad((${from} + g)::text, 20, '0'), 'org_x', 'user', 'usr_x' || (g % 7),
                CASE WHEN g % 100 = 9 THEN 'test.rare' WHEN g % 10 < 4 THEN 'test.alpha' WHEN g % 10 < 7 THEN 'test.beta' WHEN g % 10 < 9 THEN 'volume.renew' ELSE 'volume.attach' END,
                'volume', 'vol_x' || (g % 13), '{}'::jsonb, ${at}
           FROM generate_series(1, ${n}) g`,
      );
    // Whole milliseconds, as the API's since and until carry them.
    await bulk(0, 3000, "date_trunc('milliseconds', now()) + g * interval '1 hour'");
    await bulk(3000, 20, "now() - interval '1 day'");
    await bulk(3020, 1000, "date_trunc('milliseconds', now()) + (3000 + g) * interval '1 hour'");
    await t.sql('ANALYZE audit_log');
    // created_at never goes back as seq goes up, whoever inserts (the trigger of migration 1764000000170).
    expect(
      await t.sql(`SELECT count(*)::int AS n FROM (SELECT created_at < lag(created_at) OVER (ORDER BY seq) AS back FROM audit_log WHERE org_id = 'org_x') s WHERE back`),
    ).toEqual([{ n: 0 }]);
    const at = async (publicId: string) => (await t.sql<{ created_at: Date; seq: string }>('SELECT created_at, seq::text AS seq FROM audit_log WHERE public_id = $1', [publicId]))[0];
    const since = (await at(`aud_x${String(1000).padStart(20, '0')}`)).created_at; // inclusive, an entry's own time
    const tie = await at(`aud_x${String(3010).padStart(20, '0')}`);
    const until = tie.created_at; // exclusive, the time of 21 tied entries
    expect(await t.sql("SELECT count(*)::int AS n FROM audit_log WHERE org_id = 'org_x' AND created_at = $1", [until])).toEqual([{ n: 21 }]);
    const cursorSeq = String(Number(tie.seq) + 500);

    // [the action parameter, the filter it is]
    const actions: [string, string | undefined][] = [
      ['', undefined],
      ['test.rare', 'test.rare'],
      ['volume.*', 'volume.'],
    ];
    let combinations = 0;
    for (const [action, sqlAction] of actions) {
      for (const actor of [undefined, 'usr_x3']) {
        for (const target of [undefined, 'vol_x5']) {
          for (const from of [undefined, since]) {
            for (const to of [undefined, until]) {
              for (const cursor of [undefined, cursorSeq]) {
                combinations++;
                const q = new URLSearchParams({ limit: '100' });
                if (action) q.set('action', action);
                if (actor) q.set('actor_id', actor);
                if (target) q.set('target_id', target);
                if (from) q.set('since', from.toISOString());
                if (to) q.set('until', to.toISOString());
                if (cursor) q.set('cursor', encodeAuditCursor({ seq: cursor }));
                // The plain query: the same conditions on the table, no bound, no index in mind.
                const params: unknown[] = [];
                const where = ["org_id = 'org_x'"];
                const cond = (sql: string, v: unknown) => where.push(sql.replace('?', `$${params.push(v)}`));
                if (sqlAction === 'volume.') cond('action LIKE ?', 'volume.%');
                else if (sqlAction) cond('action = ?', sqlAction);
                if (actor) cond('actor_id = ?', actor);
                if (target) cond('target_id = ?', target);
                if (from) cond('created_at >= ?', from);
                if (to) cond('created_at < ?', to);
                if (cursor) cond('seq < ?::bigint', cursor);
                const expected = (await t.sql<{ public_id: string }>(`SELECT public_id FROM audit_log WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT 100`, params)).map((r) => r.public_id);
                const res = await t.http.get(`/v1/audit-log?${q.toString()}`).set(x);
                expect({ q: q.toString(), status: res.status }).toEqual({ q: q.toString(), status: 200 });
                expect({ q: q.toString(), ids: res.body.entries.map((e: Entry) => e.id) }).toEqual({ q: q.toString(), ids: expected });

                // The adapter's own statement, explained: every node that reads audit_log.
                let nodes: PlanNode[] = [];
                const explain = new TypeOrmAuditLogReader({
                  query: async (text: string, p: unknown[]) => {
                    const [{ 'QUERY PLAN': doc }] = await t.sql<{ 'QUERY PLAN': { Plan: PlanNode }[] | string }>(`EXPLAIN (FORMAT JSON) ${text}`, p);
                    nodes = planNodes((typeof doc === 'string' ? (JSON.parse(doc) as { Plan: PlanNode }[]) : doc)[0].Plan);
                    return [];
                  },
                } as unknown as Db);
                await explain.list(
                  'org_x',
                  {
                    ...(sqlAction === 'volume.' ? { actionPrefix: sqlAction } : sqlAction ? { action: sqlAction } : {}),
                    ...(actor ? { actorId: actor } : {}),
                    ...(target ? { targetId: target } : {}),
                    ...(from ? { since: from } : {}),
                    ...(to ? { until: to } : {}),
                  },
                  100,
                  cursor ? { seq: cursor } : undefined,
                );
                const reads = nodes.filter((n) => n['Relation Name'] === 'audit_log' || n['Index Name']?.startsWith('audit_log'));
                expect({ q: q.toString(), seqScans: reads.filter((n) => n['Node Type'] === 'Seq Scan').length }).toEqual({ q: q.toString(), seqScans: 0 });
                if (from || to) {
                  // The time bound is found on audit_log_org_created_idx and is a seq range of the scan that pages.
                  expect({ q: q.toString(), probe: reads.some((n) => n['Index Name'] === 'audit_log_org_created_idx') }).toEqual({ q: q.toString(), probe: true });
                  const paging = reads.filter((n) => n['Index Name'] !== 'audit_log_org_created_idx');
                  expect({ q: q.toString(), seqBound: paging.some((n) => /\bseq [<>]=? /.test(n['Index Cond'] ?? '') || /\bseq [<>]=? /.test(n['Recheck Cond'] ?? '')) }).toEqual({ q: q.toString(), seqBound: true });
                }
              }
            }
          }
        }
      }
    }
    expect(combinations).toBe(96);
  }, scaled(240_000));

  it('is append-only in the database: UPDATE, DELETE and TRUNCATE are refused', async () => {
    const before = await t.sql('SELECT count(*)::int AS n FROM audit_log');
    for (const statement of ["UPDATE audit_log SET action = 'x'", 'DELETE FROM audit_log', 'TRUNCATE audit_log']) {
      await expect(t.sql(statement)).rejects.toThrow('audit_log is append-only');
    }
    expect(await t.sql('SELECT count(*)::int AS n FROM audit_log')).toEqual(before);
  });
});

/** The operator CLI writes its audit rows with actor `system`, through the same use cases. */
describe('audit rows of the operator CLI', () => {
  it('wallet:credit, apikey:create, apikey:revoke, zone:set, region:capacity: actor system, no token', async () => {
    const db = await createTestDatabase();
    const dir = tempDir('cds-audit-cli-');
    const env = db.url ? { DATABASE_URL: db.url } : { DATA_DIR: join(dir.path, 'data') };
    try {
      const file = join(dir.path, 'seed.json');
      writeFileSync(file, JSON.stringify({ regions: [region()], organizations: [{ ...teamOrg('c'), api_keys: [] }] }));
      const run = (args: string[]) => {
        const r = runCli(args, env);
        if (r.status !== 0) throw new Error(`cli ${args.join(' ')}: ${r.stderr}`);
        return JSON.parse(r.stdout) as Record<string, string>;
      };
      run(['seed', file]);
      run(['wallet:credit', '--org', 'org_c', '--currency', 'USD', '--amount', '12.5']);
      const key = run(['apikey:create', '--org', 'org_c', '--name', 'ops', '--scopes', 'vm:read']);
      run(['apikey:revoke', '--id', key.id]);
      run(['zone:set', '--zone', 'id-jkt-b', '--available', 'true']);
      run(['region:capacity', '--region', 'id-jkt', '--gb', '30000']);
      const server = await startServerProcess({ ...env, DEMO_SEED: 'false', WORKER_ENABLED: 'false' });
      try {
        const login = await fetch(`${server.url}/v1/auth/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ email: 'owner@c.test', password: OWNER_PASSWORD }) });
        const { token } = (await login.json()) as { token: string };
        const res = await fetch(`${server.url}/v1/audit-log?action=api_key.*`, { headers: { Authorization: `Bearer ${token}` } });
        const text = await res.text();
        expect(text).not.toContain(key.token.slice(13));
        const body = JSON.parse(text) as { entries: Entry[] };
        const system = { type: 'system', id: null, name: null };
        expect(body.entries).toEqual([
          { id: expect.stringMatching(AUD_ID), created_at: expect.stringMatching(ISO), action: 'api_key.revoke', actor: system, target: { type: 'api_key', id: key.id }, ip: null, request_id: null, client_request_id: null, data: { name: 'ops' } },
          { id: expect.stringMatching(AUD_ID), created_at: expect.stringMatching(ISO), action: 'api_key.create', actor: system, target: { type: 'api_key', id: key.id }, ip: null, request_id: null, client_request_id: null, data: { name: 'ops', scopes: ['vm:read'], expires_at: null } },
        ]);
        const credit = (await (await fetch(`${server.url}/v1/audit-log?action=wallet.credit`, { headers: { Authorization: `Bearer ${token}` } })).json()) as { entries: Entry[] };
        expect(credit.entries).toEqual([
          { id: expect.stringMatching(AUD_ID), created_at: expect.stringMatching(ISO), action: 'wallet.credit', actor: system, target: null, ip: null, request_id: null, client_request_id: null, data: { currency: 'USD', amount: '12.50000' } },
        ]);
      } finally {
        await server.stop();
      }
      if (db.url) {
        // Zone and capacity changes belong to no organization (they are the operator's catalog).
        const c = new Client({ connectionString: db.url });
        await c.connect();
        const rows = (await c.query("SELECT org_id, actor_type, action, target_type, target_id, data FROM audit_log WHERE action LIKE 'catalog.%' ORDER BY id")).rows;
        await c.end();
        expect(rows).toEqual([
          { org_id: null, actor_type: 'system', action: 'catalog.zone_set', target_type: 'zone', target_id: 'id-jkt-b', data: { available: true } },
          { org_id: null, actor_type: 'system', action: 'catalog.region_capacity_set', target_type: 'region', target_id: 'id-jkt', data: { capacity_gb: 30000 } },
        ]);
      }
    } finally {
      await db.drop();
      dir.remove();
    }
  }, scaled(240_000));
});
