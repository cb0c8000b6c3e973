/**
 * Renewal throughput: POST /v1/volumes/{id}/renew under concurrency, then the worker draining
 * the operations. Starts its own server process (node dist/src/main.js) on a database of its
 * own and removes that database at the end.
 *
 *   npm run build
 *   node dist/bench/renewal.js                                                     # embedded engine, temp DATA_DIR
 *   DATABASE_URL=postgresql://postgres@127.0.0.1:5432/cds_dev node dist/bench/renewal.js   # a fresh schema, dropped after
 *
 * Settings (environment): VOLUMES (200, at most 2000), CONCURRENCY (16, at most 256), WAIT_S
 * (time allowed for the worker to finish, 120, at most 600), PORT (the server's port, on
 * 127.0.0.1; default a free one), WORKER_INTERVAL_MS (50). DATABASE_URL must name a PostgreSQL
 * server on 127.0.0.1 or localhost.
 *
 * It seeds (through the CLI: `node dist/src/cli/main.js seed FILE`, before the server starts) one
 * organization with VOLUMES detached 10 GB premium USD volumes and a wallet, then sends one
 * renewal (term 1, its own Idempotency-Key) per volume, CONCURRENCY at a time, and polls
 * GET /v1/operations?status=pending and ?status=running until both are empty. Prints one JSON
 * object: accepted renewals per second, POST latency percentiles (ms), the time until every
 * operation ended and the worker's operations per second, the server's RSS (VmRSS), and a
 * check of the money (wallet available = initial - VOLUMES x price; on PostgreSQL the ledger's
 * capture count). Figures and checks are printed, never asserted.
 */
import http from 'node:http';
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { Money } from '../src/shared/kernel/money/money';
import { childEnv as processEnv, freePort } from './processes';
import { envInt, percentile, round3 } from './stats';

/** USD minor units (1e-5) as the API writes them: exactly 5 decimals. */
const usd = (minor: bigint): string => Money.ofMinor('USD', minor).format();

const ROOT = join(__dirname, '../..');
const LOCAL_HOSTS = ['127.0.0.1', 'localhost'];

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const nowMs = (): number => Number(process.hrtime.bigint()) / 1e6;

/** Kibibytes of resident memory of a process, from /proc/<pid>/status (null where unavailable). */
function rssKb(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}
const mib = (kb: number | null): number | null => (kb === null ? null : Math.round((kb / 1024) * 10) / 10);

/** This process's environment without the settings that belong to the server child alone. */
const childEnv = (extra: Record<string, string>): NodeJS.ProcessEnv => processEnv(extra, ['VOLUMES', 'CONCURRENCY', 'WAIT_S']);

interface Database {
  env: Record<string, string>;
  engine: string;
  sql?: (text: string, params?: unknown[]) => Promise<Record<string, string>[]>;
  drop(): Promise<void>;
}

async function createDatabase(): Promise<Database> {
  const base = process.env.DATABASE_URL;
  if (!base) {
    const dir = mkdtempSync(join(tmpdir(), 'cds-bench-renewal-'));
    return { engine: `embedded (PGlite, DATA_DIR ${dir})`, env: { DATA_DIR: dir }, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const parsed = new URL(base);
  if (!LOCAL_HOSTS.includes(parsed.hostname)) throw new Error('DATABASE_URL must name a server on 127.0.0.1 or localhost (this benchmark only loads the local machine)');
  const schema = `bench_${randomBytes(6).toString('hex')}`;
  const admin = new Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  parsed.searchParams.set('options', `-c search_path=${schema}`);
  const url = parsed.toString();
  return {
    engine: `PostgreSQL (schema ${schema})`,
    env: { DATABASE_URL: url },
    sql: async (text, params = []) => (await admin.query(text.replaceAll('{schema}', schema), params)).rows,
    async drop() {
      try {
        await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      } finally {
        await admin.end();
      }
    },
  };
}

interface Server {
  child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

function startServer(env: NodeJS.ProcessEnv): Server {
  const child = spawn(process.execPath, ['dist/src/main.js'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const keep = (b: Buffer): void => {
    out = (out + b.toString()).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    output: () => out,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

interface Reply {
  status: number;
  body: string;
  ms: number;
}

async function main(): Promise<void> {
  const volumes = envInt('VOLUMES', 200, 2000);
  const concurrency = envInt('CONCURRENCY', 16, 256);
  const waitMs = envInt('WAIT_S', 120, 600) * 1000;
  const workerIntervalMs = envInt('WORKER_INTERVAL_MS', 50, 60_000, 10);
  const port = process.env.PORT ? envInt('PORT', 0, 65535) : await freePort();

  // The seed: one region, one organization, `volumes` detached 10 GB premium volumes at 0.02 USD
  // per GB-month, so one month costs 0.20000 USD; the wallet covers them all plus 100 USD.
  const sizeGb = 10n;
  const pricePerGbMinor = 2000n; // 0.02000 USD
  const priceMinor = sizeGb * pricePerGbMinor; // term 1
  const initialMinor = priceMinor * BigInt(volumes) + 100n * 100000n;
  const seed = {
    regions: [
      {
        id: 'id-jkt',
        name: 'Jakarta',
        capacity_gb: volumes * 10 + 1000,
        zones: [{ id: 'id-jkt-a', available: true }],
        volume_offers: [
          { type: 'premium', min_gb: 10, max_gb: 4000, step_gb: 10, terms: [1, 3, 12], per_server_limit: 8, price_per_gb_month: { USD: usd(pricePerGbMinor), IDR: '320' } },
        ],
      },
    ],
    organizations: [
      {
        name: 'Renewal bench',
        wallet: { USD: usd(initialMinor) },
        members: [{ email: `bench-${randomBytes(4).toString('hex')}@bench.test`, password: randomBytes(18).toString('base64'), role: 'owner' }],
        api_keys: [{ name: 'bench', scopes: ['vm:read', 'vm:write'] }],
        servers: [],
        volumes: Array.from({ length: volumes }, (_, i) => ({
          name: `bench-${i + 1}`, type: 'premium', region: 'id-jkt', zone: 'id-jkt-a', size_gb: Number(sizeGb), term_months: 1, currency: 'USD',
        })),
      },
    ],
  };

  const db = await createDatabase();
  const seedDir = mkdtempSync(join(tmpdir(), 'cds-bench-seed-'));
  let server: Server | undefined;
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  try {
    // Seed before the server starts: the embedded engine belongs to one process at a time.
    const seedFile = join(seedDir, 'seed.json');
    writeFileSync(seedFile, JSON.stringify(seed));
    const seeded = spawnSync(process.execPath, ['dist/src/cli/main.js', 'seed', seedFile], {
      cwd: ROOT,
      env: childEnv({ ...db.env, LOG_LEVEL: 'warn' }),
      encoding: 'utf8',
      timeout: 120_000,
    });
    if (seeded.status !== 0) throw new Error(`seed failed (exit ${seeded.status}): ${seeded.stderr}`);
    const out = JSON.parse(seeded.stdout) as { organizations: { id: string; api_keys: { token: string }[]; volumes: string[] }[] };
    const org = out.organizations[0];
    const token = org.api_keys[0].token;
    const volumeIds = org.volumes;

    server = startServer(
      childEnv({
        ...db.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        METRICS_PORT: '0',
        RATE_LIMIT_PER_MINUTE: '1000000',
        DEMO_SEED: 'false',
        WORKER_ENABLED: 'true',
        WORKER_INTERVAL_MS: String(workerIntervalMs),
        LOG_LEVEL: 'warn',
      }),
    );
    const pid = server.child.pid;

    const request = (method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<Reply> =>
      new Promise((resolve, reject) => {
        const started = nowMs();
        const req = http.request(
          {
            host: '127.0.0.1',
            port,
            path,
            method,
            agent,
            headers: {
              Authorization: `Bearer ${token}`,
              ...(body === undefined ? {} : { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }),
              ...headers,
            },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), ms: nowMs() - started }));
          },
        );
        req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${path} timed out after 30 s`)));
        req.on('error', reject);
        req.end(body);
      });

    // Ready: GET /v1/health answers 200 (bounded: 60 s).
    const readyBy = Date.now() + 60_000;
    for (;;) {
      if (server.child.exitCode !== null) throw new Error(`the server exited with ${server.child.exitCode}:\n${server.output()}`);
      const r = await request('GET', '/v1/health').catch(() => undefined);
      if (r?.status === 200) break;
      if (Date.now() > readyBy) throw new Error(`the server did not answer /v1/health within 60 s:\n${server.output()}`);
      await sleep(100);
    }
    const rssAfterStart = rssKb(pid);
    let rssPeak = rssAfterStart ?? 0;
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak, rssKb(pid) ?? 0);
    }, 100);

    try {
      // The renewals: one per volume, each with its own Idempotency-Key, `concurrency` at a time.
      const latencies: number[] = [];
      const statuses: Record<string, number> = {};
      let errors = 0;
      const samples: { status: number | string; body: string }[] = [];
      let next = 0;
      const renewStart = nowMs();
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < volumeIds.length) {
            const id = volumeIds[next++];
            try {
              const r = await request('POST', `/v1/volumes/${id}/renew`, JSON.stringify({ term_months: 1 }), { 'Idempotency-Key': randomUUID() });
              latencies.push(r.ms);
              statuses[r.status] = (statuses[r.status] ?? 0) + 1;
              if (r.status !== 202 && samples.length < 5) samples.push({ status: r.status, body: r.body.slice(0, 300) });
            } catch (err) {
              errors++;
              if (samples.length < 5) samples.push({ status: 'error', body: err instanceof Error ? err.message : String(err) });
            }
          }
        }),
      );
      const renewEnd = nowMs();
      const accepted = statuses['202'] ?? 0;

      // The worker: poll until no operation is pending or running (bounded by WAIT_S).
      const unfinished = async (status: string): Promise<number> => {
        const r = await request('GET', `/v1/operations?status=${status}&limit=1`);
        if (r.status !== 200) throw new Error(`GET /v1/operations?status=${status} answered ${r.status}: ${r.body}`);
        return (JSON.parse(r.body) as { operations: unknown[] }).operations.length;
      };
      const waitDeadline = Date.now() + waitMs;
      let drained = false;
      let polls = 0;
      while (Date.now() < waitDeadline) {
        polls++;
        if ((await unfinished('pending')) === 0 && (await unfinished('running')) === 0) {
          drained = true;
          break;
        }
        await sleep(workerIntervalMs);
      }
      const doneAt = nowMs();
      const rssAtEnd = rssKb(pid);
      clearInterval(sampler);
      rssPeak = Math.max(rssPeak, rssAtEnd ?? 0);

      // The money: GET /v1/wallet; the ledger by SQL on PostgreSQL.
      const wallet = await request('GET', '/v1/wallet');
      const usdBalance = (JSON.parse(wallet.body) as { balances: { currency: string; available: string; reserved: string }[] }).balances.find(
        (b) => b.currency === 'USD',
      );
      const expectedAvailable = usd(initialMinor - priceMinor * BigInt(volumes));
      let ledger: Record<string, unknown>;
      if (db.sql) {
        const rows = await db.sql(`SELECT kind, count(*)::text AS n, sum(amount)::text AS minor FROM {schema}.wallet_ledger WHERE org_id = $1 GROUP BY kind ORDER BY kind`, [org.id]);
        const kinds = Object.fromEntries(rows.map((r) => [r.kind, { count: Number(r.n), amount: usd(BigInt(r.minor)) }]));
        const captures = (kinds.capture as { count: number } | undefined)?.count ?? 0;
        ledger = { by_kind: kinds, captures_expected: volumes, captures_ok: captures === volumes };
      } else {
        ledger = { checked: false, why: 'the embedded engine belongs to the server process; the ledger is read with SQL on PostgreSQL only' };
      }

      latencies.sort((a, b) => a - b);
      const renewS = (renewEnd - renewStart) / 1000;
      const totalS = (doneAt - renewStart) / 1000;
      process.stdout.write(
        JSON.stringify(
          {
            engine: db.engine,
            volumes,
            concurrency,
            worker_interval_ms: workerIntervalMs,
            renewals: {
              sent: volumeIds.length,
              statuses,
              errors,
              ...(samples.length > 0 ? { first_failures: samples } : {}),
              duration_s: round3(renewS),
              accepted_per_s: Math.round((accepted / renewS) * 10) / 10,
              latency_ms: {
                p50: round3(percentile(latencies, 50)),
                p90: round3(percentile(latencies, 90)),
                p99: round3(percentile(latencies, 99)),
                max: round3(latencies[latencies.length - 1] ?? 0),
              },
            },
            worker: {
              all_finished: drained,
              polls,
              finished_after_first_post_s: round3(totalS),
              finished_after_last_post_s: round3((doneAt - renewEnd) / 1000),
              operations_per_s: drained ? Math.round((accepted / totalS) * 10) / 10 : null,
            },
            server_rss_mib: { after_start: mib(rssAfterStart), at_end: mib(rssAtEnd), peak_sampled: mib(rssPeak) },
            money: {
              price_each: usd(priceMinor),
              initial_available: usd(initialMinor),
              expected_available: expectedAvailable,
              available: usdBalance?.available ?? null,
              reserved: usdBalance?.reserved ?? null,
              available_ok: usdBalance?.available === expectedAvailable,
              ...(accepted === volumes ? {} : { expected_available_for_accepted: usd(initialMinor - priceMinor * BigInt(accepted)) }),
              ledger,
            },
          },
          null,
          2,
        ) + '\n',
      );
      const fiveHundreds = Object.keys(statuses).filter((k) => k.startsWith('5')).length > 0;
      if (fiveHundreds || errors > 0 || !drained) {
        process.stderr.write(`Something went wrong (5xx, failed requests or unfinished operations); the server's last output:\n${server.output().slice(-6000)}\n`);
      }
    } finally {
      clearInterval(sampler);
    }
  } finally {
    agent.destroy();
    await server?.stop();
    rmSync(seedDir, { recursive: true, force: true });
    await db.drop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
