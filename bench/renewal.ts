/**
 * Renewal throughput and the operations engine: how fast renewals are accepted, how fast the
 * worker finishes them during and after the load, and how long each waits. Starts its own
 * server process (node dist/src/main.js, default worker settings) on a database of its own per
 * scenario and removes it at the end.
 *
 *   npm run build
 *   node dist/bench/renewal.js                                                     # embedded engine, temp DATA_DIR
 *   DATABASE_URL=postgresql://postgres@127.0.0.1:5432/cds_dev node dist/bench/renewal.js   # fresh schemas, dropped after
 *
 * Settings (environment): ORGS (organization counts to run, "1,100"), RENEWALS (per scenario,
 * 6000, at most 20000), CONCURRENCY (50, at most 256), QUEUED (renewals queued with the worker
 * stopped, then drained by a fresh process: 10000, 0 skips), IDLE_SAMPLES (single renewals with
 * no load, 20), WAIT_S (time allowed for a drain, 300), WORKER_CONCURRENCY and
 * WORKER_INTERVAL_MS (passed to the server when set), BENCH_SERVER_NODE_ARGS (extra node options
 * for the server, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"), WORKER_PROCESS=separate (the load
 * scenarios' server runs no worker, WORKER_ENABLED=false; a second server process, sent no
 * requests, runs it). DATABASE_URL must name a PostgreSQL server
 * on 127.0.0.1 or localhost.
 *
 * Per organization count: seeds (CLI) that many organizations, RENEWALS volumes spread over
 * them and a wallet each; sends one keyed renewal per volume, CONCURRENCY at a time, round robin
 * over the organizations; waits until every operation ended; then reads every operation's
 * created_at and finished_at (GET /v1/operations) and prints accepted/s, operations finished/s
 * during the load and after it, accept-to-finish p50/p99 (created_at to finished_at) and answer-to-finish
 * p50/p99 (from the 202 reaching the client to finished_at), the backlog (accepted, not ended) at
 * the end of the load, and whether the wallets add up. The first scenario then sends
 * IDLE_SAMPLES renewals one at a time with no load, each awaited with a long-poll
 * (?wait=10): accept-to-finish and POST-to-answer medians. QUEUED: renewals accepted by a server
 * with WORKER_ENABLED=false, then a server with the worker drains them (operations/s between
 * the first and the last finished_at). On PostgreSQL a ceiling is measured in the same run:
 * single-row INSERTs per second on one connection (autocommit, as pgbench's simplest write),
 * and every rate is also printed as a ratio to it. Figures and checks are printed, never asserted.
 */
import http from 'node:http';
import { spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Money } from '../src/shared/kernel/money/money';
import { Child, Database, ROOT, createDatabase, mib, rssKb, spawnNode } from './harness';
import { childEnv as processEnv, freePort } from './processes';
import { envInt, percentile, round3 } from './stats';

/** USD minor units (1e-5) as the API writes them: exactly 5 decimals. */
const usd = (minor: bigint): string => Money.ofMinor('USD', minor).format();


const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const nowMs = (): number => Number(process.hrtime.bigint()) / 1e6;


/** This process's environment without the settings that belong to the server child alone. */
const childEnv = (extra: Record<string, string>): NodeJS.ProcessEnv =>
  processEnv(extra, ['ORGS', 'RENEWALS', 'CONCURRENCY', 'QUEUED', 'IDLE_SAMPLES', 'WAIT_S', 'WORKER_CONCURRENCY', 'WORKER_INTERVAL_MS', 'WORKER_PROCESS']);

/** WORKER_PROCESS=separate: the load scenarios' server runs no worker; a second server process (sent no requests) runs it. */
const separateWorker = (): boolean => process.env.WORKER_PROCESS === 'separate';






interface Reply {
  status: number;
  body: string;
  ms: number;
}

interface OperationTimes {
  id: string;
  created: number;
  finished: number | null;
}

const SIZE_GB = 10n;
const PRICE_PER_GB_MINOR = 2000n; // 0.02000 USD per GB-month
const PRICE_MINOR = SIZE_GB * PRICE_PER_GB_MINOR; // term 1

function seedFor(orgs: number, volumesPerOrg: number[]): object {
  const total = volumesPerOrg.reduce((a, b) => a + b, 0);
  return {
    regions: [
      {
        id: 'id-jkt',
        name: 'Jakarta',
        capacity_gb: total * 10 + 1000,
        zones: [{ id: 'id-jkt-a', available: true }],
        volume_offers: [
          { type: 'premium', min_gb: 10, max_gb: 4000, step_gb: 10, terms: [1, 3, 12], per_server_limit: 8, price_per_gb_month: { USD: usd(PRICE_PER_GB_MINOR), IDR: '320' } },
        ],
      },
    ],
    organizations: Array.from({ length: orgs }, (_, o) => ({
      name: `Renewal bench ${o + 1}`,
      wallet: { USD: usd(PRICE_MINOR * BigInt(volumesPerOrg[o]) + 100n * 100000n) },
      members: [{ email: `bench-${o}-${randomBytes(4).toString('hex')}@bench.test`, password: randomBytes(18).toString('base64'), role: 'owner' }],
      api_keys: [{ name: 'bench', scopes: ['vm:read', 'vm:write'] }],
      servers: [],
      volumes: Array.from({ length: volumesPerOrg[o] }, (_, i) => ({
        name: `bench-${i + 1}`, type: 'premium', region: 'id-jkt', zone: 'id-jkt-a', size_gb: Number(SIZE_GB), term_months: 1, currency: 'USD',
      })),
    })),
  };
}

interface Seeded {
  orgs: { id: string; token: string; volumes: string[] }[];
}

function seedDatabase(db: Database, seed: object): Seeded {
  const dir = mkdtempSync(join(tmpdir(), 'cds-bench-seed-'));
  try {
    const file = join(dir, 'seed.json');
    writeFileSync(file, JSON.stringify(seed));
    const r = spawnSync(process.execPath, ['dist/src/cli/main.js', 'seed', file], {
      cwd: ROOT,
      env: childEnv({ ...db.env, LOG_LEVEL: 'warn' }),
      encoding: 'utf8',
      timeout: 600_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    if (r.status !== 0) throw new Error(`seed failed (exit ${r.status}): ${r.stderr}`);
    const out = JSON.parse(r.stdout) as { organizations: { id: string; api_keys: { token: string }[]; volumes: string[] }[] };
    return { orgs: out.organizations.map((o) => ({ id: o.id, token: o.api_keys[0].token, volumes: o.volumes })) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A server process on `db` and an HTTP client for it. */
class Api {
  readonly agent: http.Agent;
  constructor(
    readonly server: Child,
    readonly port: number,
    concurrency: number,
  ) {
    this.agent = new http.Agent({ keepAlive: true, maxSockets: concurrency + 4 });
  }

  static async start(db: Database, concurrency: number, extra: Record<string, string>): Promise<Api> {
    const port = await freePort();
    const passed: Record<string, string> = {};
    for (const k of ['WORKER_CONCURRENCY', 'WORKER_INTERVAL_MS']) if (process.env[k]) passed[k] = process.env[k]!;
    const server = spawnNode(
      'dist/src/main.js',
      childEnv({
        ...db.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        METRICS_PORT: '0',
        RATE_LIMIT_PER_MINUTE: '1000000',
        DEMO_SEED: 'false',
        WORKER_ENABLED: 'true',
        LOG_LEVEL: 'warn',
        DB_POOL_SIZE: '20',
        ...passed,
        ...extra,
      }),
      port,
      (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean),
    );
    const api = new Api(server, port, concurrency);
    const readyBy = Date.now() + 60_000;
    for (;;) {
      if (server.child.exitCode !== null) throw new Error(`the server exited with ${server.child.exitCode}:\n${server.output()}`);
      const r = await api.request('', 'GET', '/v1/health').catch(() => undefined);
      if (r?.status === 200) return api;
      if (Date.now() > readyBy) throw new Error(`the server did not answer /v1/health within 60 s:\n${server.output()}`);
      await sleep(100);
    }
  }

  request(token: string, method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<Reply> {
    return new Promise((resolve, reject) => {
      const started = nowMs();
      const req = http.request(
        {
          host: '127.0.0.1',
          port: this.port,
          path,
          method,
          agent: this.agent,
          headers: {
            ...(token ? { Authorization: `Bearer ${token}` } : {}),
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
      req.setTimeout(70_000, () => req.destroy(new Error(`${method} ${path} timed out after 70 s`)));
      req.on('error', reject);
      req.end(body);
    });
  }

  renew(token: string, volumeId: string): Promise<Reply> {
    return this.request(token, 'POST', `/v1/volumes/${volumeId}/renew`, JSON.stringify({ term_months: 1 }), { 'Idempotency-Key': randomUUID() });
  }

  /** Every operation of the organization: created_at and finished_at in epoch ms. */
  async operations(token: string): Promise<OperationTimes[]> {
    const out: OperationTimes[] = [];
    let cursor: string | null = null;
    do {
      const r = await this.request(token, 'GET', `/v1/operations?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      if (r.status !== 200) throw new Error(`GET /v1/operations answered ${r.status}: ${r.body}`);
      const page = JSON.parse(r.body) as { operations: { id: string; created_at: string; finished_at: string | null }[]; next_cursor: string | null };
      for (const o of page.operations) out.push({ id: o.id, created: Date.parse(o.created_at), finished: o.finished_at ? Date.parse(o.finished_at) : null });
      cursor = page.next_cursor;
    } while (cursor);
    return out;
  }

  async unfinished(tokens: string[]): Promise<number> {
    let n = 0;
    for (const token of tokens) {
      for (const status of ['pending', 'running']) {
        const r = await this.request(token, 'GET', `/v1/operations?status=${status}&limit=1`);
        n += (JSON.parse(r.body) as { operations: unknown[] }).operations.length;
      }
      if (n > 0) return n;
    }
    return n;
  }

  async stop(): Promise<void> {
    this.agent.destroy();
    await this.server.stop();
  }
}

/** Sends one renewal per volume, `concurrency` at a time, round robin over the organizations. */
async function load(api: Api, seeded: Seeded, concurrency: number, pick: (o: Seeded['orgs'][number]) => string[]) {
  const queue: { token: string; volume: string }[] = [];
  const lists = seeded.orgs.map((o) => ({ token: o.token, volumes: pick(o) }));
  for (let i = 0; lists.some((l) => i < l.volumes.length); i++) for (const l of lists) if (i < l.volumes.length) queue.push({ token: l.token, volume: l.volumes[i] });
  const statuses: Record<string, number> = {};
  const latencies: number[] = [];
  /** Operation id → when its 202 reached the client (epoch ms, the server's clock: same machine). */
  const answered = new Map<string, number>();
  let errors = 0;
  let next = 0;
  const start = Date.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < queue.length) {
        const item = queue[next++];
        try {
          const r = await api.renew(item.token, item.volume);
          if (r.status === 202) answered.set((JSON.parse(r.body) as { operation: { id: string } }).operation.id, Date.now());
          statuses[r.status] = (statuses[r.status] ?? 0) + 1;
          latencies.push(r.ms);
        } catch {
          errors++;
        }
      }
    }),
  );
  const end = Date.now();
  latencies.sort((a, b) => a - b);
  return { start, end, statuses, errors, accepted: statuses['202'] ?? 0, latencies, answered };
}

async function drained(api: Api, tokens: string[], waitMs: number): Promise<boolean> {
  const deadline = Date.now() + waitMs;
  while (Date.now() < deadline) {
    if ((await api.unfinished(tokens)) === 0) return true;
    await sleep(100);
  }
  return false;
}

const perS = (n: number, ms: number): number | null => (ms > 0 ? Math.round((n / (ms / 1000)) * 10) / 10 : null);
const ratio = (value: number | null, ceiling: number | null): number | null => (value === null || !ceiling ? null : Math.round((value / ceiling) * 1000) / 1000);

/** Single-row INSERTs per second on one autocommit connection for `ms`: the ceiling of this machine right now. */
async function insertCeiling(db: Database, ms = 3000): Promise<number | null> {
  if (!db.client) return null;
  const c = db.client;
  await c.query('CREATE TEMP TABLE bench_ceiling (id bigint, at timestamptz DEFAULT now())');
  const start = nowMs();
  let n = 0;
  while (nowMs() - start < ms) await c.query('INSERT INTO bench_ceiling (id) VALUES ($1)', [++n]);
  const rate = n / ((nowMs() - start) / 1000);
  await c.query('DROP TABLE bench_ceiling');
  return Math.round(rate);
}

async function walletsOk(api: Api, seeded: Seeded, renewedPerOrg: Map<string, number>): Promise<boolean> {
  for (const o of seeded.orgs) {
    const r = await api.request(o.token, 'GET', '/v1/wallet');
    const b = (JSON.parse(r.body) as { balances: { currency: string; available: string; reserved: string }[] }).balances.find((x) => x.currency === 'USD');
    const expected = usd(PRICE_MINOR * BigInt(o.volumes.length) + 100n * 100000n - PRICE_MINOR * BigInt(renewedPerOrg.get(o.id) ?? 0));
    if (b?.available !== expected || b.reserved !== '0.00000') return false;
  }
  return true;
}

async function loadScenario(orgs: number, renewals: number, idleSamples: number, concurrency: number, waitMs: number, ceiling: number | null) {
  const db = await createDatabase('renewal');
  let api: Api | undefined;
  let worker: Api | undefined;
  try {
    const idle = idleSamples;
    const perOrg = Array.from({ length: orgs }, (_, o) => Math.floor(renewals / orgs) + (o < renewals % orgs ? 1 : 0) + (o === 0 ? idle : 0));
    const seeded = seedDatabase(db, seedFor(orgs, perOrg));
    api = await Api.start(db, concurrency, separateWorker() ? { WORKER_ENABLED: 'false' } : {});
    if (separateWorker()) worker = await Api.start(db, 1, {});
    const loadVolumes = (o: Seeded['orgs'][number]) => (o === seeded.orgs[0] ? o.volumes.slice(idle) : o.volumes);
    const l = await load(api, seeded, concurrency, loadVolumes);
    const finishedAll = await drained(api, seeded.orgs.map((o) => o.token), waitMs);
    const rssMib = mib(rssKb(api.server.child.pid));
    const times: OperationTimes[] = [];
    const renewedPerOrg = new Map<string, number>();
    for (const o of seeded.orgs) {
      const ops = await api.operations(o.token);
      renewedPerOrg.set(o.id, ops.length);
      times.push(...ops);
    }
    const finished = times.filter((t) => t.finished !== null) as { id: string; created: number; finished: number }[];
    const lastFinish = Math.max(...finished.map((t) => t.finished));
    const duringLoad = finished.filter((t) => t.finished <= l.end).length;
    const backlog = times.filter((t) => t.created <= l.end && (t.finished === null || t.finished > l.end)).length;
    const waits = finished.map((t) => t.finished - t.created).sort((a, b) => a - b);
    // What a client waits after its 202: from the answer to finished_at (0 when it had ended before the answer arrived).
    const afterAnswer = finished.flatMap((t) => (l.answered.has(t.id) ? [Math.max(0, t.finished - l.answered.get(t.id)!)] : [])).sort((a, b) => a - b);
    const loadMs = l.end - l.start;
    const acceptedPerS = perS(l.accepted, loadMs);
    const finishedDuringPerS = perS(duringLoad, loadMs);
    const finishedAfterPerS = perS(finished.length - duringLoad, lastFinish - l.end);

    // No load: single renewals, each awaited with a long-poll.
    let idleFigures: Record<string, unknown> | undefined;
    if (idle > 0) {
      const first = seeded.orgs[0];
      const pickups: number[] = [];
      const answers: number[] = [];
      for (const volume of first.volumes.slice(0, idle)) {
        const r = await api.renew(first.token, volume);
        const op = (JSON.parse(r.body) as { operation: { id: string } }).operation;
        const posted = nowMs();
        const w = await api.request(first.token, 'GET', `/v1/operations/${op.id}?wait=10`);
        answers.push(nowMs() - posted + r.ms);
        const body = JSON.parse(w.body) as { created_at: string; finished_at: string | null };
        if (body.finished_at) pickups.push(Date.parse(body.finished_at) - Date.parse(body.created_at));
        await sleep(50);
      }
      pickups.sort((a, b) => a - b);
      answers.sort((a, b) => a - b);
      idleFigures = {
        samples: idle,
        ended: pickups.length,
        accept_to_finish_ms: { p50: percentile(pickups, 50), max: pickups[pickups.length - 1] ?? null },
        post_to_long_poll_answer_ms: { p50: round3(percentile(answers, 50)), max: round3(answers[answers.length - 1] ?? 0) },
      };
      renewedPerOrg.set(first.id, (renewedPerOrg.get(first.id) ?? 0) + pickups.length);
    }
    return {
      organizations: orgs,
      renewals: { sent: l.statuses, errors: l.errors, duration_s: round3(loadMs / 1000), accepted_per_s: acceptedPerS, post_latency_ms: { p50: round3(percentile(l.latencies, 50)), p99: round3(percentile(l.latencies, 99)) } },
      worker: {
        all_finished: finishedAll,
        finished_per_s_during_load: finishedDuringPerS,
        finished_per_s_after_load: finishedAfterPerS,
        backlog_at_end_of_load: backlog,
        backlog_in_seconds_of_accepts: acceptedPerS ? Math.round((backlog / acceptedPerS) * 100) / 100 : null,
        drained_s_after_load: round3((lastFinish - l.end) / 1000),
        accept_to_finish_ms: { p50: percentile(waits, 50), p99: percentile(waits, 99), max: waits[waits.length - 1] ?? null },
        answer_to_finish_ms: { p50: percentile(afterAnswer, 50), p99: percentile(afterAnswer, 99), max: afterAnswer[afterAnswer.length - 1] ?? null },
      },
      ...(idleFigures ? { no_load: idleFigures } : {}),
      ratios_to_ceiling: { accepted: ratio(acceptedPerS, ceiling), finished_during_load: ratio(finishedDuringPerS, ceiling), finished_after_load: ratio(finishedAfterPerS, ceiling) },
      server_rss_mib_after_drain: rssMib,
      ...(worker ? { worker_process_rss_mib_after_drain: mib(rssKb(worker.server.child.pid)) } : {}),
      wallets_ok: await walletsOk(api, seeded, renewedPerOrg),
    };
  } finally {
    await worker?.stop();
    await api?.stop();
    await db.drop();
  }
}

/** QUEUED renewals accepted with the worker stopped, then drained by a fresh server process. */
async function drainScenario(queued: number, concurrency: number, waitMs: number, ceiling: number | null) {
  const db = await createDatabase('renewal');
  let api: Api | undefined;
  try {
    const orgs = Math.min(100, queued);
    const perOrg = Array.from({ length: orgs }, (_, o) => Math.floor(queued / orgs) + (o < queued % orgs ? 1 : 0));
    const seeded = seedDatabase(db, seedFor(orgs, perOrg));
    api = await Api.start(db, concurrency, { WORKER_ENABLED: 'false' });
    const l = await load(api, seeded, concurrency, (o) => o.volumes);
    await api.stop();
    const started = Date.now();
    api = await Api.start(db, concurrency, {});
    const ready = Date.now();
    const finishedAll = await drained(api, seeded.orgs.map((o) => o.token), waitMs);
    const finished: number[] = [];
    const renewedPerOrg = new Map<string, number>();
    for (const o of seeded.orgs) {
      const ops = await api.operations(o.token);
      renewedPerOrg.set(o.id, ops.length);
      for (const t of ops) if (t.finished !== null) finished.push(t.finished);
    }
    finished.sort((a, b) => a - b);
    const spanMs = finished.length > 1 ? finished[finished.length - 1] - finished[0] : 0;
    const opsPerS = perS(finished.length, spanMs);
    return {
      queued: l.accepted,
      all_finished: finishedAll,
      operations_per_s: opsPerS,
      ratio_to_ceiling: ratio(opsPerS, ceiling),
      first_finished_ms_after_server_ready: finished.length > 0 ? finished[0] - ready : null,
      server_start_ms: ready - started,
      drain_s: round3(spanMs / 1000),
      wallets_ok: await walletsOk(api, seeded, renewedPerOrg),
    };
  } finally {
    await api?.stop();
    await db.drop();
  }
}

async function main(): Promise<void> {
  const orgCounts = (process.env.ORGS || '1,100').split(',').map((s) => {
    if (!/^\d+$/.test(s.trim()) || Number(s) < 1 || Number(s) > 1000) throw new Error('ORGS must be a list of whole numbers from 1 to 1000');
    return Number(s);
  });
  const renewals = envInt('RENEWALS', 6000, 20000);
  const concurrency = envInt('CONCURRENCY', 50, 256);
  const queued = envInt('QUEUED', 10000, 20000, 0);
  const idle = envInt('IDLE_SAMPLES', 20, 200, 0);
  const waitMs = envInt('WAIT_S', 300, 1800) * 1000;

  const probe = await createDatabase('renewal');
  let ceiling: number | null;
  try {
    ceiling = await insertCeiling(probe);
  } finally {
    await probe.drop();
  }
  const report: Record<string, unknown> = {
    engine: probe.engine,
    concurrency,
    worker_concurrency: process.env.WORKER_CONCURRENCY ?? 'default',
    worker_process: separateWorker() ? 'separate' : 'in the HTTP server process',
    load_average_at_start: loadavg().map((x) => Math.round(x * 100) / 100),
    ceiling_single_row_inserts_per_s: ceiling,
    scenarios: [] as unknown[],
  };
  for (const [i, orgs] of orgCounts.entries()) {
    (report.scenarios as unknown[]).push(await loadScenario(orgs, renewals, i === 0 ? idle : 0, concurrency, waitMs, ceiling));
  }
  if (queued > 0) report.queued_drain = await drainScenario(queued, concurrency, waitMs, ceiling);
  report.load_average_at_end = loadavg().map((x) => Math.round(x * 100) / 100);
  process.stdout.write(JSON.stringify(report, null, 2) + '\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
