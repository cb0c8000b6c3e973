/**
 * The expiry phase of `npm run bench` (terms.md "verify, chaos, bench"): EXPIRY_VOLUMES volumes and
 * EXPIRY_SERVERS bought servers of the bench's organizations (round robin) whose `expires_at` fall
 * within EXPIRY_SPREAD_S seconds, the term sweep of the running server (TERM_SWEEP_MS, its default
 * unless set) suspending them. Measured in one run:
 *
 * - every resource suspended within 120 s of its `expires_at` (suspended_at − expires_at: p50, p99,
 *   max, and how many were late or never suspended);
 * - the p99 of GET /v1/volumes?limit=20 while the sweep runs against the same load, same data,
 *   just before, with nothing due (the target: at most 1.5 times).
 *
 * The resources are written straight into the bench's schema (PostgreSQL only: the embedded
 * engine belongs to the server process), first with a far `expires_at` (so the baseline reads
 * the same tables), then brought due in one statement. Servers are cx1 with their instances at the
 * simulated provider (a fifth stopped); volumes are detached with their disks. A fifth of each
 * (others than the stopped servers) has automatic renewal on, with AUTO_RENEW_LEAD_S (the
 * server's setting, read from the same environment; 3 days by default, so set it to seconds): the
 * sweep renews those from their organizations' wallets instead of suspending them, and their
 * deadline is the accepted attempt's time. Not released during the run (retention is the server's
 * default).
 */
import autocannon from 'autocannon';
import { Database, sleep } from './harness';
import { envInt } from './stats';

export const EXPIRY_DEADLINE_S = 120;

export interface ExpiryResult {
  volumes: number;
  servers: number;
  spread_s: number;
  suspended: number;
  auto_renew: number;
  renewed: number;
  renewals_succeeded: number;
  late_or_missing: number;
  lag_p50_s: number | null;
  lag_p99_s: number | null;
  lag_max_s: number | null;
  deadline_s: number;
  volumes_p99_ms_without_sweep: number;
  volumes_p99_ms_during_sweep: number;
  p99_ratio: number | null;
  volumes_requests_without_sweep: number;
  volumes_requests_during_sweep: number;
  suspend_operations_ended: number;
}

/** The expiring resources' region: added to the bench's seed file (capacity for them). */
export function expiryRegion(): object {
  const volumes = envInt('EXPIRY_VOLUMES', 10_000, 1_000_000, 0);
  const servers = envInt('EXPIRY_SERVERS', 2_000, 200_000, 0);
  return {
    id: 'bench-exp',
    name: 'Expiry',
    capacity_gb: volumes * 10 + 1000,
    zones: [{ id: 'bench-exp-a', available: true }],
    volume_offers: [{ type: 'premium', min_gb: 10, max_gb: 4000, step_gb: 10, terms: [1, 3, 12], per_server_limit: 8, price_per_gb_month: { USD: '0.02000', IDR: '320' } }],
    server_offer: { vcpu_capacity: servers + 1000, terms: [1, 3, 12], plans: [{ plan: 'cx1', price_per_month: { USD: '4.50000', IDR: '72000' } }] },
  };
}

async function volumesLoad(port: number, token: (n: number) => string, connections: number, durationS: number): Promise<{ p99: number; requests: number; errors: number }> {
  let n = 0;
  const r = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections,
    duration: durationS,
    timeout: 30,
    requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: '/v1/volumes?limit=20', headers: { authorization: `Bearer ${token(n++)}` } }) }],
  });
  return { p99: r.latency.p99, requests: r.requests.total, errors: r.errors + r.timeouts + r.non2xx };
}

export async function expiryPhase(
  db: Database,
  port: number,
  token: (n: number) => string,
  connections: number,
  durationS: number,
  log: (s: string) => void,
): Promise<ExpiryResult | undefined> {
  if (!db.client || !db.schema) {
    log('expiry: skipped (needs DATABASE_URL: the resources are written straight into the database)');
    return undefined;
  }
  const volumes = envInt('EXPIRY_VOLUMES', 10_000, 1_000_000, 0);
  const servers = envInt('EXPIRY_SERVERS', 2_000, 200_000, 0);
  const spreadS = envInt('EXPIRY_SPREAD_S', 60, 600, 1);
  const leadS = envInt('AUTO_RENEW_LEAD_S', 259_200, 31_536_000, 0);
  const c = db.client;
  await c.query(`SET search_path TO ${db.schema}`);
  const orgs = (await c.query<{ id: string }>(`SELECT id FROM organizations WHERE name LIKE 'Bench %' ORDER BY id`)).rows.map((r) => r.id);
  log(`expiry: writing ${volumes} volumes and ${servers} servers of ${orgs.length} organizations, due later ...`);
  const far = '2100-01-01T00:00:00Z';
  await c.query(
    `INSERT INTO volumes (id, org_id, name, status, type, region_id, zone_id, size_gb, mounted, term_months, billing_currency, billing_amount, price_usd_minor, price_idr_minor, expires_at,
                          auto_renew_enabled, auto_renew_lead_s)
     SELECT 'vol_exp' || i, ($1::text[])[1 + i % cardinality($1::text[])], 'exp-' || i, 'available', 'premium', 'bench-exp', 'bench-exp-a', 10, false, 1, 'USD', 20000, 2000, 320, $3::timestamptz,
            i % 5 = 1, $4::int
       FROM generate_series(1, $2::int) AS i`,
    [orgs, volumes, far, leadS],
  );
  await c.query(
    `INSERT INTO provider_disks (disk_id, volume_id, zone_id, size_gb, type) SELECT 'disk_' || id, id, zone_id, size_gb, type FROM volumes WHERE region_id = 'bench-exp'`,
  );
  await c.query(
    `INSERT INTO servers (id, org_id, name, region_id, zone_id, status, plan_id, vcpus, memory_gb, disk_gb, image_id, ipv4, term_months,
                          billing_currency, billing_amount, price_usd_minor, price_idr_minor, expires_at, auto_renew_enabled, auto_renew_lead_s)
     SELECT 'vm_exp' || i, ($1::text[])[1 + i % cardinality($1::text[])], 'exp-' || i, 'bench-exp', 'bench-exp-a', CASE WHEN i % 5 = 0 THEN 'stopped' ELSE 'running' END,
            'cx1', 1, 2, 40, 'debian-12', next_server_ipv4(), 1, 'USD', 450000, 450000, 72000, $3::timestamptz, i % 5 = 1, $4::int
       FROM generate_series(1, $2::int) AS i`,
    [orgs, servers, far, leadS],
  );
  await c.query(
    `INSERT INTO provider_instances (instance_id, server_id, zone_id, vcpus, memory_gb, disk_gb, image, ipv4, power)
     SELECT 'ins_' || id, id, zone_id, 1, 2, 40, 'debian-12', ipv4, status FROM servers WHERE region_id = 'bench-exp'`,
  );
  for (const table of ['volumes', 'servers', 'provider_disks', 'provider_instances']) await c.query(`ANALYZE ${db.schema}.${table}`);

  log(`expiry: GET /v1/volumes?limit=20 without the sweep, ${durationS} s ...`);
  const before = await volumesLoad(port, token, connections, durationS);

  // Due: expires_at spread evenly over spreadS seconds from `start`, in one transaction with the
  // expiry notices a real sweep would have sent days before (EXPIRY_NOTICES_S, the server's):
  // the resources' terms began a month ago, and no backlog of notices is what this phase measures.
  const offsets = (process.env.EXPIRY_NOTICES_S ?? '604800,259200,86400').split(',').filter((o) => o.trim() !== '').map(Number);
  const start = new Date(Date.now() + 15_000);
  log(`expiry: ${volumes + servers} resources expiring within ${spreadS} s from ${start.toISOString()} (a fifth renewing itself ${leadS} s ahead); GET /v1/volumes?limit=20 during the sweep ...`);
  await c.query('BEGIN');
  await c.query(`UPDATE volumes SET expires_at = $3::timestamptz + make_interval(secs => $1::float * (substr(id, 8)::int - 1) / greatest($2::int, 1)) WHERE region_id = 'bench-exp'`, [spreadS, volumes, start]);
  await c.query(`UPDATE servers SET expires_at = $3::timestamptz + make_interval(secs => $1::float * (substr(id, 7)::int - 1) / greatest($2::int, 1)) WHERE region_id = 'bench-exp'`, [spreadS, servers, start]);
  for (const table of ['volumes', 'servers']) {
    await c.query(
      `INSERT INTO expiry_notices (resource_id, org_id, expires_at, offset_s, sent_at)
       SELECT r.id, r.org_id, date_trunc('milliseconds', r.expires_at), o, now() FROM ${table} r CROSS JOIN unnest($1::int[]) AS o WHERE r.region_id = 'bench-exp'
       ON CONFLICT DO NOTHING`,
      [offsets],
    );
  }
  await c.query('COMMIT');
  const during = await volumesLoad(port, token, connections, Math.max(0, Math.ceil((start.getTime() - Date.now()) / 1000)) + spreadS + Math.ceil(envInt('TERM_SWEEP_MS', 5000, 3_600_000, 100) / 1000));

  // Every one suspended, or renewed (its automatic renewal accepted), or its deadline passed. The
  // term end each is measured against: its expires_at then (a renewal moves expires_at; the
  // attempt keeps the one it renewed).
  const byDeadline = Date.now() + (EXPIRY_DEADLINE_S + 5) * 1000;
  const RESOURCES = `(SELECT v.id, v.suspended_at, v.auto_renew_enabled FROM volumes v WHERE v.region_id = 'bench-exp'
                      UNION ALL SELECT s.id, s.suspended_at, s.auto_renew_enabled FROM servers s WHERE s.region_id = 'bench-exp')`;
  const OUTCOMES = `SELECT r.id, r.auto_renew_enabled AS auto, a.at AS renewed_at, a.expires_at AS renewed_end, a.operation_id, r.suspended_at
                      FROM ${RESOURCES} r LEFT JOIN auto_renew_attempts a ON a.resource_id = r.id AND a.outcome = 'accepted'`;
  const notYet = async () =>
    Number((await c.query<{ n: string }>(`SELECT count(*) AS n FROM (${OUTCOMES}) o WHERE o.suspended_at IS NULL AND o.renewed_at IS NULL`)).rows[0].n);
  while ((await notYet()) > 0 && Date.now() < byDeadline) await sleep(500);
  // The lag of a suspension: suspended_at − expires_at (the resource's, unchanged by a suspension);
  // of a renewal: the accepted attempt's time − the expires_at it renewed (negative: ahead of it).
  const { rows } = await c.query<{ suspended: string; renewed: string; auto: string; late: string; p50: number | null; p99: number | null; max: number | null; succeeded: string }>(
    `WITH o AS (${OUTCOMES}),
          r AS (SELECT o.*, coalesce(o.renewed_end, (SELECT expires_at FROM volumes WHERE id = o.id UNION ALL SELECT expires_at FROM servers WHERE id = o.id)) AS term_end FROM o),
          lag AS (SELECT extract(epoch FROM coalesce(renewed_at, suspended_at) - term_end) AS s FROM r WHERE renewed_at IS NOT NULL OR suspended_at IS NOT NULL)
     SELECT (SELECT count(*) FROM r WHERE suspended_at IS NOT NULL) AS suspended,
            (SELECT count(*) FROM r WHERE renewed_at IS NOT NULL) AS renewed,
            (SELECT count(*) FROM r WHERE auto) AS auto,
            (SELECT count(*) FROM r WHERE coalesce(renewed_at, suspended_at) IS NULL OR coalesce(renewed_at, suspended_at) > term_end + make_interval(secs => $1)) AS late,
            (SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY s)::numeric, 1)::float FROM lag) AS p50,
            (SELECT round(percentile_cont(0.99) WITHIN GROUP (ORDER BY s)::numeric, 1)::float FROM lag) AS p99,
            (SELECT round(max(s)::numeric, 1)::float FROM lag) AS max,
            (SELECT count(*) FROM r JOIN operations op ON op.id = r.operation_id WHERE op.status = 'succeeded') AS succeeded`,
    [EXPIRY_DEADLINE_S],
  );
  const ended = await c.query<{ n: string }>(`SELECT count(*) AS n FROM operations WHERE type IN ('vm.suspend', 'volume.suspend') AND finished_at IS NOT NULL`);
  return {
    volumes,
    servers,
    spread_s: spreadS,
    suspended: Number(rows[0].suspended),
    auto_renew: Number(rows[0].auto),
    renewed: Number(rows[0].renewed),
    renewals_succeeded: Number(rows[0].succeeded),
    late_or_missing: Number(rows[0].late),
    lag_p50_s: rows[0].p50,
    lag_p99_s: rows[0].p99,
    lag_max_s: rows[0].max,
    deadline_s: EXPIRY_DEADLINE_S,
    volumes_p99_ms_without_sweep: before.p99,
    volumes_p99_ms_during_sweep: during.p99,
    p99_ratio: before.p99 > 0 ? Math.round((during.p99 / before.p99) * 100) / 100 : null,
    volumes_requests_without_sweep: before.requests,
    volumes_requests_during_sweep: during.requests,
    suspend_operations_ended: Number(ended.rows[0].n),
  };
}
