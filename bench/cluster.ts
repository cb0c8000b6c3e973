/**
 * Cluster run: the service as it runs at scale, on this machine, under mixed traffic and faults.
 *
 *   npm run cluster                 (CLUSTER_S=60 by default)
 *
 * It starts (installing Debian's haproxy and pgbouncer, and PostgreSQL 15, when missing):
 * - a PostgreSQL 15 primary of its own (initdb, a free port; never the server on 5432, which
 *   others use) and a streaming standby made from it with pg_basebackup on another port,
 *   replicating synchronously (a commit the primary acknowledged is on the standby);
 * - PgBouncer in transaction mode in front of the primary (bench/pgbouncer.ts), with a
 *   session-mode alias of the same database for the processes' LISTEN connections
 *   (DATABASE_DIRECT_URL), so that a failover repoints both;
 * - 3 API processes (WORKER_ENABLED=false) behind HAProxy (health checks on /v1/ready) and 2
 *   worker processes, all with DATABASE_POOL_MODE=transaction through PgBouncer.
 * Then the chaos run's traffic (bench/chaos.ts: purchases, actions, renewals, servers,
 * templates, top-ups paid on the checkout, webhooks to a local receiver, reads) goes through
 * HAProxy from CONCURRENCY clients for CLUSTER_S seconds. A client sends a request again with
 * the same Idempotency-Key after a 5xx or a cut connection (as the SDKs do), up to 12 times over
 * about 15 s; reads are retried too, other requests without a key are not (their 5xx while the
 * database is away, and HAProxy's 502 when their process is killed under them, are counted as
 * client errors and are cut connections to the traffic, as a kill's are in the chaos run). Meanwhile, at fixed
 * points of the run: an API process is SIGKILLed and restarted (15%), a worker (30%), PgBouncer
 * is restarted (45%), and the primary is stopped (immediate: a crash), the standby promoted and
 * PgBouncer repointed at it (60%). A probe writes (PATCH a volume's note) every 200 ms to
 * measure how long writes are refused after each fault.
 *
 * Afterwards: every accepted (202) operation must exist and end, the webhook deliveries are
 * checked, and `cli verify` runs on the promoted database. Prints one JSON summary: requests/s,
 * the errors clients saw after their retries, the seconds of refused writes after each fault,
 * whether every accepted operation ended, the verify report. Exits 1 when an operation did not
 * end, an accepted one is missing, verify finds a violation, or the traffic found a problem
 * (a replay that differs from the original, a paid top-up not credited …). Stops everything it
 * started and removes the clusters it made (CLUSTER_KEEP=1 keeps them, and prints where).
 *
 * Settings (environment): CLUSTER_S (60, at most 3600), CONCURRENCY (8, at most 64), WAIT_S
 * (time allowed for operations to end afterwards, 120), CLUSTER_LOGS (a path prefix: each
 * process's output is written there).
 */
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { Context, Reply, Server, Stats, ownerPasswords, pickAction, runCli, seedOrgs, startServer } from './chaos';
import { FUNDING_SERVER_ENV } from './chaos-funding';
import { ChaosWebhooks, WEBHOOK_SERVER_ENV } from './chaos-webhooks';
import { PgBouncer, ensureDebianPackages, startPgBouncer, unprivilegedUser, waitListening } from './pgbouncer';
import { childEnv as processEnv, freePort } from './processes';
import { envInt } from './stats';

const DATABASE = 'cds_cluster';
const LISTEN_ALIAS = 'cds_cluster_listen';
const REQUEST_TIMEOUT_MS = 15_000;
/** Pauses before each retry of a client (same Idempotency-Key): about 15 s in all. */
const RETRY_DELAYS_MS = [100, 200, 400, 800, 1000, 1500, 1500, 2000, 2000, 2000, 2000, 2000];
const API_PROCESSES = 3;
const WORKER_PROCESSES = 2;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)];
const childEnv = (extra: Record<string, string>): NodeJS.ProcessEnv => processEnv(extra, ['CLUSTER_S', 'CONCURRENCY', 'WAIT_S', 'CLUSTER_KEEP', 'CLUSTER_LOGS']);

// ---------------------------------------------------------------------------------------------
// PostgreSQL: a primary and a streaming standby of our own

function postgresBin(): string {
  const find = (): string | undefined => {
    const r = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
    const fromConfig = r.status === 0 ? r.stdout.trim() : undefined;
    return [fromConfig, '/usr/lib/postgresql/15/bin'].find((dir) => dir && existsSync(join(dir, 'pg_basebackup')) && existsSync(join(dir, 'initdb')));
  };
  let dir = find();
  if (!dir) {
    ensureDebianPackages(['postgresql-15']);
    dir = find();
  }
  if (!dir) throw new Error('no PostgreSQL 15 binaries (initdb, pg_basebackup) after installing postgresql-15');
  return dir;
}

class PostgresNode {
  constructor(
    readonly name: string,
    readonly dir: string,
    readonly port: number,
    private readonly bin: string,
    private readonly socketDir: string,
    private readonly user: { uid: number; gid: number } | undefined,
  ) {}

  url(database: string): string {
    return `postgresql://postgres@127.0.0.1:${this.port}/${database}`;
  }

  run(tool: string, args: string[]): string {
    const r = spawnSync(join(this.bin, tool), args, { encoding: 'utf8', timeout: 120_000, cwd: tmpdir(), ...(this.user ?? {}) });
    if (r.status !== 0) throw new Error(`${tool} ${args.join(' ')} exited ${r.status}: ${r.stderr}${r.stdout}`);
    return r.stdout;
  }

  /** Server settings on the command line (never copied by pg_basebackup): the standby gets its own. */
  start(settings: string[]): void {
    const options = [`-c port=${this.port}`, '-c listen_addresses=127.0.0.1', `-c unix_socket_directories=${this.socketDir}`, '-c fsync=off', '-c max_connections=300', '-c shared_buffers=64MB', ...settings];
    this.run('pg_ctl', ['-D', this.dir, '-l', `${this.dir}.log`, '-w', '-t', '60', '-o', options.join(' '), 'start']);
  }

  stop(mode: 'fast' | 'immediate'): void {
    if (!existsSync(join(this.dir, 'postmaster.pid'))) return;
    this.run('pg_ctl', ['-D', this.dir, '-m', mode, '-w', 'stop']);
  }

  promote(): void {
    this.run('pg_ctl', ['-D', this.dir, '-w', '-t', '60', 'promote']);
  }
}

// ---------------------------------------------------------------------------------------------
// HAProxy

function haproxyConfig(port: number, apiPorts: number[]): string {
  return [
    'global',
    '  maxconn 4096',
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 60s',
    '  timeout server 60s',
    '  timeout http-keep-alive 65s',
    // A request never sent (connection refused: the process is gone) goes to another process.
    '  retries 3',
    '  option redispatch',
    '  retry-on conn-failure',
    'frontend api',
    `  bind 127.0.0.1:${port}`,
    '  option forwardfor',
    '  default_backend api',
    'backend api',
    '  balance leastconn',
    '  option httpchk GET /v1/ready',
    '  http-check expect status 200',
    '  default-server inter 1s fastinter 500ms downinter 1s fall 2 rise 1',
    ...apiPorts.map((p, i) => `  server api${i + 1} 127.0.0.1:${p} check`),
    '',
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------

interface ProbeSample {
  at: number;
  ok: boolean;
}

async function main(): Promise<void> {
  const runMs = envInt('CLUSTER_S', 60, 3600, 10) * 1000;
  const concurrency = envInt('CONCURRENCY', 8, 64);
  const waitMs = envInt('WAIT_S', 120, 600) * 1000;
  ensureDebianPackages(['haproxy', 'pgbouncer']);
  const bin = postgresBin();
  const user = unprivilegedUser();

  const tmp = mkdtempSync(join(tmpdir(), 'cds-cluster-'));
  if (user) chownSync(tmp, user.uid, user.gid);
  const [primaryPort, standbyPort, haproxyPort] = [await freePort(), await freePort(), await freePort()];
  const primary = new PostgresNode('primary', join(tmp, 'primary'), primaryPort, bin, tmp, user);
  const standby = new PostgresNode('standby', join(tmp, 'standby'), standbyPort, bin, tmp, user);
  const servers: { role: 'api' | 'worker'; port: number; server: Server }[] = [];
  const allServers: Server[] = [];
  let haproxy: ChildProcess | undefined;
  let bouncer: PgBouncer | undefined;
  let webhooks: ChaosWebhooks | undefined;
  let own: Client | undefined;
  let exitCode = 1;
  const stats = new Stats();
  const log = (text: string): void => void process.stderr.write(`cluster: ${text}\n`);

  try {
    // The primary replicates synchronously to any standby (synchronous_standby_names '*'): a
    // commit it acknowledged survives its loss. The setting is on its command line only, so
    // the promoted standby does not wait for a standby of its own.
    log(`PostgreSQL primary on ${primaryPort}, standby on ${standbyPort} (${tmp})`);
    primary.run('initdb', ['-D', primary.dir, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
    primary.start(['-c wal_level=replica', '-c max_wal_senders=5', "-c synchronous_standby_names='*'", '-c synchronous_commit=on']);
    primary.run('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres', '-D', standby.dir, '-R', '-X', 'stream', '-c', 'fast', '--no-sync']);
    standby.start(['-c hot_standby=on']);

    const admin = new Client({ connectionString: primary.url('postgres') });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${DATABASE}`);
    const replicating = await admin.query(`SELECT state, sync_state FROM pg_stat_replication`);
    await admin.end();
    log(`standby: ${JSON.stringify(replicating.rows)}`);

    bouncer = await startPgBouncer({ serverPort: primaryPort, poolSize: 20, sessionDatabases: { [LISTEN_ALIAS]: DATABASE } });
    log(`PgBouncer (transaction mode) on ${bouncer.port}`);

    const cli = (args: string[], url: string): string => runCli(args, url, 180_000);
    // Migrations on the direct connection, as the Kubernetes migrations Job does.
    cli(['migrate'], primary.url(DATABASE));
    const orgs = seedOrgs((args) => cli(args, primary.url(DATABASE)), tmp);

    const common = {
      DATABASE_URL: bouncer.url(DATABASE),
      DATABASE_POOL_MODE: 'transaction',
      DATABASE_DIRECT_URL: bouncer.url(LISTEN_ALIAS),
      METRICS_PORT: '0',
      HOST: '127.0.0.1',
      DEMO_SEED: 'false',
      MIGRATIONS_RUN: 'false',
      LOG_LEVEL: 'info',
      WORKER_INTERVAL_MS: '200',
      // Steps on a loaded machine can take seconds: a shorter lease lets a step be taken over (and counted) while it runs.
      WORKER_LEASE_MS: '8000',
      RATE_LIMIT_PER_MINUTE: '1000000',
      DB_POOL_SIZE: '5',
      SHUTDOWN_TIMEOUT_MS: '2000',
      TRUST_PROXY: '1',
      PROVIDER_LATENCY_MS: '20',
      ...WEBHOOK_SERVER_ENV,
      ...FUNDING_SERVER_ENV,
    };
    const start = async (role: 'api' | 'worker', port: number): Promise<Server> => {
      // 90 s: on a loaded machine a start under a failover takes tens of seconds.
      const server = await startServer(childEnv({ ...common, PORT: String(port), WORKER_ENABLED: role === 'worker' ? 'true' : 'false' }), 90_000);
      allServers.push(server);
      return server;
    };
    const ports = await Promise.all(Array.from({ length: API_PROCESSES + WORKER_PROCESSES }, () => freePort()));
    const roles = ports.map((port, i) => ({ role: (i < API_PROCESSES ? 'api' : 'worker') as 'api' | 'worker', port }));
    for (const r of roles) servers.push({ ...r, server: await start(r.role, r.port) });

    const haproxyFile = join(tmp, 'haproxy.cfg');
    writeFileSync(haproxyFile, haproxyConfig(haproxyPort, ports.slice(0, API_PROCESSES)));
    haproxy = spawn('haproxy', ['-f', haproxyFile, '-db'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let haproxyErr = '';
    haproxy.stderr?.on('data', (b: Buffer) => (haproxyErr = (haproxyErr + b.toString()).slice(-4000)));
    await waitListening(haproxyPort, 10_000).catch((err: Error) => {
      throw new Error(`${err.message}: ${haproxyErr}`);
    });
    const entry = `http://127.0.0.1:${haproxyPort}`;
    // HAProxy marks the processes up once their /v1/ready answers 200.
    for (let i = 0; i < 100 && (await fetch(`${entry}/v1/ready`).then((r) => r.status, () => 0)) !== 200; i++) await sleep(100);
    log(`HAProxy on ${haproxyPort} in front of ${API_PROCESSES} API processes; ${WORKER_PROCESSES} workers`);

    for (const [i, org] of orgs.entries()) {
      const res = await fetch(`${entry}/v1/auth/login`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ email: `owner${i + 1}@chaos.test`, password: ownerPasswords[i] }),
      });
      if (res.status !== 200) throw new Error(`login of owner${i + 1}@chaos.test answered ${res.status}`);
      org.session = ((await res.json()) as { token: string }).token;
    }
    webhooks = await ChaosWebhooks.start(orgs, entry, (text) => stats.problem(text));

    // Until when a database fault (and 5 s after it) explains a 5xx.
    let databaseAwayUntil = 0;
    // The clients: through HAProxy, again with the same key on a 5xx or a cut connection.
    const client = { retries: 0, errors: {} as Record<string, number> };
    const ctx: Context = {
      orgs,
      stats,
      recent: [],
      async send(org, method, path, opts = {}) {
        const headers: Record<string, string> = { Authorization: `Bearer ${opts.bearer ?? (opts.session ? org.session : org.token)}` };
        if (opts.body) headers['Content-Type'] = 'application/json';
        if (opts.key) headers['Idempotency-Key'] = opts.key;
        Object.assign(headers, opts.headers);
        const retryable = method === 'GET' || opts.key !== undefined || path.startsWith('/v1/payment-events/');
        for (let attempt = 0; ; attempt++) {
          let reply: Reply | undefined;
          let failure: string;
          try {
            const res = await fetch(entry + path, { method, headers, body: opts.body, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
            reply = { status: res.status, body: await res.text() };
            failure = String(res.status);
          } catch (err) {
            const e = err as Error & { cause?: { code?: string } };
            failure = e.cause?.code ?? e.name;
          }
          if (reply && reply.status < 500) return reply;
          // A documented 503 of the simulated compute provider (a console after failed calls) is an answer.
          if (reply && reply.status === 503 && reply.body.includes('"provider_unavailable"')) return reply;
          if (retryable && attempt < RETRY_DELAYS_MS.length) {
            client.retries += 1;
            await sleep(RETRY_DELAYS_MS[attempt]);
            continue;
          }
          client.errors[failure] = (client.errors[failure] ?? 0) + 1;
          // HAProxy's own answer (no process answered: one was killed under the request) is a
          // cut connection to the traffic, as a kill is in the chaos run. So is the service's 5xx
          // to a request it may not send again (no key) while the database is away (PgBouncer
          // restarting, the failover: longer than the service's own retries); any other 5xx is
          // an answer, which the traffic reports as a problem.
          if (reply && [502, 503, 504].includes(reply.status) && reply.body.startsWith('<html>')) return undefined;
          if (reply && Date.now() <= databaseAwayUntil) return undefined;
          return reply;
        }
      },
    };

    own = new Client({ connectionString: primary.url(DATABASE) });
    await own.connect();

    // The write probe: one PATCH every 200 ms, never retried, each answer timed.
    const probeOrg = orgs[1];
    const probeVolume = probeOrg.volumes[2];
    const samples: ProbeSample[] = [];
    const startedAt = Date.now();
    const deadline = startedAt + runMs;
    const probe = (async () => {
      for (let n = 0; Date.now() < deadline; n++) {
        const at = Date.now();
        const ok = await fetch(`${entry}/v1/volumes/${probeVolume}`, {
          method: 'PATCH',
          headers: { Authorization: `Bearer ${probeOrg.token}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ note: `probe ${n}` }),
          signal: AbortSignal.timeout(2_000),
        }).then((r) => r.status === 200, () => false);
        samples.push({ at, ok });
        await sleep(Math.max(0, 200 - (Date.now() - at)));
      }
    })();

    const clients = Array.from({ length: concurrency }, async () => {
      while (Date.now() < deadline) await pickAction().run(ctx);
    });

    // The faults, at fixed points of the run.
    const faults: { fault: string; at_s: number; took_ms: number }[] = [];
    const at = async (fraction: number, fault: string, act: () => Promise<void>): Promise<void> => {
      await sleep(Math.max(0, startedAt + runMs * fraction - Date.now()));
      const began = Date.now();
      await act();
      faults.push({ fault, at_s: Math.round((began - startedAt) / 100) / 10, took_ms: Date.now() - began });
      log(`${fault} (${Date.now() - began} ms)`);
    };
    // The replacement starts in the background (a start takes seconds): the next fault keeps its time.
    const restarts: Promise<void>[] = [];
    const killAndRestart = async (role: 'api' | 'worker'): Promise<void> => {
      const victim = pick(servers.filter((s) => s.role === role));
      victim.server.killed = true;
      const exited = new Promise((resolve) => victim.server.child.once('exit', resolve));
      victim.server.child.kill('SIGKILL');
      await exited;
      restarts.push(
        start(role, victim.port)
          .then(
            (server) => void (victim.server = server),
            (err: unknown) => stats.problem(`the killed ${role} process did not start again: ${(err as Error).message.slice(0, 500)}`, true),
          ),
      );
    };
    const faulted = (async () => {
      await at(0.15, 'SIGKILL an API process, start it again', () => killAndRestart('api'));
      await at(0.3, 'SIGKILL a worker process, start it again', () => killAndRestart('worker'));
      await at(0.45, 'restart PgBouncer', async () => {
        databaseAwayUntil = Infinity;
        await bouncer!.restart();
        databaseAwayUntil = Date.now() + 5_000;
      });
      await at(0.6, 'stop the primary (immediate), promote the standby, repoint PgBouncer', async () => {
        databaseAwayUntil = Infinity;
        await own?.end().catch(() => undefined);
        primary.stop('immediate');
        standby.promote();
        await bouncer!.repoint(standbyPort);
        own = new Client({ connectionString: standby.url(DATABASE) });
        await own.connect();
        databaseAwayUntil = Date.now() + 5_000;
      });
    })();
    await Promise.all([...clients, probe, faulted]);
    await Promise.all(restarts);
    const trafficMs = Date.now() - startedAt;

    // Seconds of refused writes after each fault: from its start to the first probe write answered 200.
    const refused = faults.map((f) => {
      const began = startedAt + f.at_s * 1000;
      const firstOk = samples.find((s) => s.at >= began && s.ok);
      return { fault: f.fault, refused_writes_s: firstOk ? Math.round((firstOk.at - began) / 100) / 10 : null };
    });

    // Every accepted operation must end (a killed worker's after its lease), on the promoted primary.
    const drainStarted = Date.now();
    let unfinished = -1;
    while (Date.now() - drainStarted < waitMs) {
      unfinished = Number((await own!.query(`SELECT count(*)::int AS n FROM operations WHERE status IN ('pending', 'running')`)).rows[0].n);
      if (unfinished === 0) break;
      await sleep(250);
    }
    if (unfinished !== 0) stats.problem(`${unfinished} operations still pending or running ${waitMs / 1000} s after the traffic stopped`);
    const accepted = [...stats.accepted];
    const found = new Set((await own!.query(`SELECT id FROM operations WHERE id = ANY($1)`, [accepted])).rows.map((r: { id: string }) => r.id));
    const missing = accepted.filter((id) => !found.has(id));
    if (missing.length > 0) stats.problem(`${missing.length} accepted (202) operations do not exist on the promoted primary: ${missing.slice(0, 10).join(', ')}`);
    // The checks read through one API process directly: they verify the data, not the balancer.
    const direct = servers.find((s) => s.role === 'api')!.server.url;
    await webhooks.check(own!, direct, new Map(orgs.map((o) => [o.id, o.token])), waitMs).catch((err: unknown) => {
      const e = err as Error & { cause?: { code?: string; message?: string } };
      stats.problem(`the webhook checks failed: ${e.message} ${e.cause?.code ?? ''} ${e.cause?.message ?? ''}`, true);
    });
    const internalFailures = (await own!.query(
      `SELECT type, error->>'message' AS message, count(*)::int AS n FROM operations WHERE status = 'failed' AND error->>'code' = 'internal' GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2 LIMIT 10`,
    )).rows as { type: string; message: string; n: number }[];
    const outcomes = (await own!.query(`SELECT status, coalesce(error->>'code', '') AS code, count(*)::int AS n FROM operations GROUP BY 1, 2 ORDER BY 1, 2`)).rows as {
      status: string;
      code: string;
      n: number;
    }[];

    const verifyOut = cli(['verify'], standby.url(DATABASE));
    const report = verifyOut ? (JSON.parse(verifyOut) as { ok: boolean; checks: { name: string; violations: number }[]; violations: unknown[] }) : undefined;
    if (!report?.ok) stats.problem(`verify on the promoted database found ${report ? report.violations.length : 'an error, no report'}`);
    for (const s of allServers) if (s.crashed()) stats.problem(`a server process exited on its own: ${s.output().slice(-2000)}`, true);
    if (process.env.CLUSTER_LOGS) {
      for (const s of allServers) writeFileSync(`${process.env.CLUSTER_LOGS}.${s.id}.log`, s.output());
      writeFileSync(`${process.env.CLUSTER_LOGS}.haproxy.log`, haproxyErr);
      writeFileSync(`${process.env.CLUSTER_LOGS}.pgbouncer.log`, bouncer.log());
    }

    const requestsTotal = [...stats.byAction.values()].reduce((s, m) => s + [...m.values()].reduce((x, y) => x + y, 0), 0);
    const summary = {
      ok: stats.problems.length === 0,
      duration_s: Math.round(trafficMs / 100) / 10,
      topology: { api_processes: API_PROCESSES, worker_processes: WORKER_PROCESSES, haproxy_port: haproxyPort, pgbouncer: 'transaction mode', primary_port: primaryPort, standby_port: standbyPort, clients: concurrency },
      requests_total: requestsTotal,
      requests_per_s: Math.round((requestsTotal / (trafficMs / 1000)) * 10) / 10,
      requests_by_status: [...stats.byAction.values()].reduce<Record<string, number>>((acc, m) => {
        for (const [status, n] of m) acc[status] = (acc[status] ?? 0) + n;
        return acc;
      }, {}),
      client_retries: client.retries,
      client_errors: client.errors,
      client_errors_total: Object.values(client.errors).reduce((a, b) => a + b, 0),
      write_probe: { sent: samples.length, refused: samples.filter((s) => !s.ok).length },
      faults: faults.map((f, i) => ({ ...f, refused_writes_s: refused[i].refused_writes_s })),
      refused_writes_at_failover_s: refused.find((r) => r.fault.startsWith('stop the primary'))?.refused_writes_s ?? null,
      restarts_of_killed_processes: restarts.length,
      accepted_operations: accepted.length,
      every_accepted_operation_ended: unfinished === 0 && missing.length === 0,
      operations: outcomes.map((o) => ({ status: o.status, ...(o.code ? { error: o.code } : {}), count: o.n })),
      // What an `internal` failure was (a type and message each), so a run's report says what to look at.
      internal_failures: internalFailures,
      verify_on_promoted: report ? { ok: report.ok, checks: Object.fromEntries(report.checks.map((c) => [c.name, c.violations])), violations: report.violations.slice(0, 20) } : 'verify failed to run',
      webhooks: webhooks.summary(),
      requests: Object.fromEntries([...stats.byAction].map(([a, m]) => [a, Object.fromEntries([...m].sort())])),
      problems: stats.problems,
    };
    process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
    exitCode = summary.ok ? 0 : 1;
  } finally {
    for (const s of allServers) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
    if (haproxy && haproxy.exitCode === null) haproxy.kill('SIGKILL');
    await webhooks?.close();
    await own?.end().catch(() => undefined);
    await bouncer?.stop().catch(() => undefined);
    for (const node of [primary, standby]) {
      try {
        node.stop('immediate');
      } catch (err) {
        log(`stopping the ${node.name}: ${(err as Error).message}`);
      }
    }
    if (process.env.CLUSTER_KEEP === '1') log(`kept ${tmp}`);
    else rmSync(tmp, { recursive: true, force: true });
  }
  process.exitCode = exitCode;
}

main()
  .catch((err: unknown) => {
    process.stderr.write(`cluster: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  })
  // Whatever is still open (a child's pipe, a socket) does not keep the run alive once it is over.
  .finally(() => setTimeout(() => process.exit(), 1_000).unref());
