/**
 * GET /v1/audit-log on an organization with a million entries: figures, not assertions.
 *
 *   npm run build && DATABASE_URL=postgresql://postgres@127.0.0.1:5432/cds_dev node dist/bench/audit-log.js
 *
 * Makes a fresh schema in that database (dropped at the end), starts `node dist/src/main.js` on
 * it, signs up one owner, bulk-loads ROWS (1,000,000) audit entries for that organization plus
 * ROWS / 5 for another one, then times each kind of request (REQUESTS, 200, one at a time):
 * over HTTP, and the very same SQL (the adapter's own, through a plain pg client) as the
 * ceiling, with the index the plan uses. PostgreSQL only, on 127.0.0.1 or localhost.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { Client } from 'pg';
import { TypeOrmAuditLogReader } from '../src/modules/audit/infrastructure/typeorm-audit-trail';
import { AuditCursor, AuditLogFilter, encodeAuditCursor } from '../src/modules/audit/domain/audit-log';
import type { Db } from '../src/shared/database/transaction';
import { freePort } from './processes';
import { envInt, percentile, round3 } from './stats';

const ROWS = envInt('ROWS', 1_000_000, 5_000_000, 1000);
const REQUESTS = envInt('REQUESTS', 200, 10_000);

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
function get(port: number, path: string, token: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent, headers: { Authorization: `Bearer ${token}` } }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
  });
}
function post(port: number, path: string, payload: object): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(payload);
    const req = http.request({ host: '127.0.0.1', port, path, method: 'POST', headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) } }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end(data);
  });
}

async function time(n: number, work: () => Promise<void>): Promise<{ p50: number; p99: number }> {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await work();
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  ms.sort((a, b) => a - b);
  return { p50: round3(percentile(ms, 50)), p99: round3(percentile(ms, 99)) };
}

async function main(): Promise<void> {
  const base = process.env.DATABASE_URL;
  if (!base || !['127.0.0.1', 'localhost'].includes(new URL(base).hostname)) throw new Error('DATABASE_URL must name a PostgreSQL server on 127.0.0.1 or localhost');
  const schema = `bench_${randomBytes(6).toString('hex')}`;
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  const admin = new Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  const sql = new Client({ connectionString: url.toString() });
  let server: ChildProcess | undefined;
  try {
    const port = await freePort();
    const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: url.toString(), PORT: String(port), METRICS_PORT: '0', HOST: '127.0.0.1', WORKER_ENABLED: 'false', DEMO_SEED: 'false', LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '1000000' };
    delete env.REDIS_URL;
    delete env.DATA_DIR;
    server = spawn(process.execPath, ['dist/src/main.js'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
    for (let i = 0; ; i++) {
      const up = await new Promise<boolean>((r) => http.get({ host: '127.0.0.1', port, path: '/v1/health' }, (res) => { res.resume(); r(res.statusCode === 200); }).on('error', () => r(false)));
      if (up) break;
      if (i > 300) throw new Error('server did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
    const signup = JSON.parse((await post(port, '/v1/auth/signup', { email: 'bench@audit.test', password: 'bench password', organization_name: 'Bench' })).body);
    const other = JSON.parse((await post(port, '/v1/auth/signup', { email: 'other@audit.test', password: 'bench password', organization_name: 'Other' })).body);
    const token: string = signup.token;
    const orgId: string = signup.organization.id;
    await sql.connect();

    const load = async (org: string, rows: number) => {
      // Entries as the service writes them: one seq per entry, a year of timestamps in seq order, a
      // mix of actions. A bulk load: the trigger that numbers entries one by one is off meanwhile,
      // and the counter row (last_seq, last_at) is set once at the end.
      await sql.query('ALTER TABLE audit_log DISABLE TRIGGER audit_log_position');
      await sql.query(
        `INSERT INTO audit_log (public_id, org_id, actor_type, actor_id, action, target_type, target_id, ip_address, request_id, data, created_at, seq)
         SELECT 'aud_' || md5(random()::text), $1, 'user', 'usr_bench' || (g % 50), a.action, 'volume', 'vol_bench' || (g % 10000), '203.0.113.' || (g % 250),
                'req_bench' || g, jsonb_build_object('n', g), h.last_at + (g * interval '365 days' / $2::int), h.last_seq + g
           FROM generate_series(1, $2::int) g
           CROSS JOIN LATERAL (SELECT (ARRAY['volume.renew','volume.renew','auth.login','auth.login','api_key.create','volume.attach','volume.detach','wallet.credit','api_key.revoke','member.add'])[1 + g % 10] AS action) a0
           CROSS JOIN LATERAL (SELECT CASE WHEN g % 1000 = 0 THEN 'member.role_change' ELSE a0.action END AS action) a
           CROSS JOIN (SELECT last_seq, last_at FROM audit_heads WHERE org_id = $1) h`,
        [org, rows],
      );
      await sql.query(
        'UPDATE audit_heads h SET last_seq = last_seq + $2, last_at = (SELECT max(created_at) FROM audit_log WHERE org_id = $1) WHERE org_id = $1',
        [org, rows],
      );
      await sql.query('ALTER TABLE audit_log ENABLE TRIGGER audit_log_position');
    };
    let t0 = Date.now();
    await load(orgId, ROWS);
    await load(other.organization.id, Math.floor(ROWS / 5));
    await sql.query('ANALYZE audit_log');
    const loadS = (Date.now() - t0) / 1000;
    const size = (await sql.query(`SELECT pg_size_pretty(pg_total_relation_size('audit_log')) AS total, pg_size_pretty(pg_indexes_size('audit_log')) AS indexes`)).rows[0];
    console.log(`loaded ${ROWS} entries for ${orgId} and ${Math.floor(ROWS / 5)} for another organization in ${loadS.toFixed(1)} s; audit_log ${size.total} (indexes ${size.indexes})`);

    const head = Number((await sql.query('SELECT last_seq FROM audit_heads WHERE org_id = $1', [orgId])).rows[0].last_seq);
    const middle: AuditCursor = { seq: String(Math.floor(head / 2)) };
    // The entries span the year after the sign-up (created_at follows seq, as the service records them): times count back from the newest.
    const newest = ((await sql.query('SELECT last_at FROM audit_heads WHERE org_id = $1', [orgId])).rows[0] as { last_at: Date }).last_at.getTime();
    const mid = new Date(newest - 182 * 86_400_000).toISOString();
    const dayBefore = new Date(newest - 86_400_000);
    const reader = new TypeOrmAuditLogReader({ query: async (text: string, params: unknown[]) => (await sql.query(text, params)).rows } as unknown as Db);
    const cases: { name: string; query: string; filter: AuditLogFilter; after?: AuditCursor }[] = [
      { name: 'first page (limit 50)', query: '', filter: {} },
      { name: 'page at the middle (cursor)', query: `&cursor=${encodeAuditCursor(middle)}`, filter: {}, after: middle },
      { name: 'action exact, rare (0.1%)', query: '&action=member.role_change', filter: { action: 'member.role_change' } },
      { name: 'action prefix volume.*', query: '&action=volume.*', filter: { actionPrefix: 'volume.' } },
      { name: 'actor_id (1 in 50)', query: '&actor_id=usr_bench7', filter: { actorId: 'usr_bench7' } },
      { name: 'target_id (1 in 10,000)', query: '&target_id=vol_bench42', filter: { targetId: 'vol_bench42' } },
      { name: 'since = 1 day before the newest', query: `&since=${dayBefore.toISOString()}`, filter: { since: dayBefore } },
      { name: 'until = 6 months before', query: `&until=${mid}`, filter: { until: new Date(mid) } },
      { name: 'until 6 months + action prefix', query: `&until=${mid}&action=volume.*`, filter: { until: new Date(mid), actionPrefix: 'volume.' } },
      { name: 'until 6 months + actor_id', query: `&until=${mid}&actor_id=usr_bench7`, filter: { until: new Date(mid), actorId: 'usr_bench7' } },
      { name: 'since 1 day + rare action', query: `&since=${dayBefore.toISOString()}&action=member.role_change`, filter: { since: dayBefore, actionPrefix: undefined, action: 'member.role_change' } },
    ];
    console.log(`\n${REQUESTS} requests each, one at a time (ms; HTTP includes authentication, rate limit and JSON)`);
    console.log('case                              HTTP p50   HTTP p99   SQL p50   SQL p99   HTTP/SQL p50  plan');
    for (const c of cases) {
      const path = `/v1/audit-log?limit=50${c.query}`;
      const check = await get(port, path, token);
      if (check.status !== 200) throw new Error(`${path}: ${check.status} ${check.body}`);
      t0 = Date.now();
      const httpT = await time(REQUESTS, async () => void (await get(port, path, token)));
      const sqlT = await time(REQUESTS, async () => void (await reader.list(orgId, c.filter, 50, c.after)));
      // The index the plan starts from, read from EXPLAIN of the adapter's statement.
      let planned = '';
      const explaining = new TypeOrmAuditLogReader({
        query: async (text: string, params: unknown[]) => {
          const plan = (await sql.query(`EXPLAIN ${text}`, params)).rows.map((r: { 'QUERY PLAN': string }) => r['QUERY PLAN']).join('\n');
          planned = [...new Set([...plan.matchAll(/(?:Index|Index Only|Bitmap Index) Scan(?: Backward)? (?:using|on) (\w+)/g)].map((m) => m[1]).filter((n) => n.startsWith('audit_log')))].join(', ') || 'no index';
          return [];
        },
      } as unknown as Db);
      await explaining.list(orgId, c.filter, 50, c.after);
      console.log(
        `${c.name.padEnd(33)} ${String(httpT.p50).padStart(8)} ${String(httpT.p99).padStart(10)} ${String(sqlT.p50).padStart(9)} ${String(sqlT.p99).padStart(9)} ${(httpT.p50 / sqlT.p50).toFixed(1).padStart(13)}  ${planned}`,
      );
    }
  } finally {
    agent.destroy();
    server?.kill('SIGTERM');
    await sql.end().catch(() => undefined);
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
