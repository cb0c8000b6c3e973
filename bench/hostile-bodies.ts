/**
 * Hostile bodies: GET /v1/health latency while N connections each send one tiny brotli body
 * (about 28 bytes, a JSON text of 1,000,012 bytes once inflated, just under the old 1 MiB limit) to POST /v1/auth/login, which needs no token.
 *
 *   npm run build && node dist/bench/hostile-bodies.js
 *
 * Settings (environment): CONNECTIONS (2000, at most 20000), PROBE_S (seconds of health checks
 * with no hostile load first, the baseline: 5), SERVER_JS (the server to start: dist/src/main.js
 * of this build by default; point it at another build to compare), DATABASE_URL (a PostgreSQL
 * database for the server; embedded PGlite in a temporary directory without it).
 *
 * Prints one JSON object: the body's size, the baseline health p50/p99/max (the machine's own
 * noise), the same under the hostile load, the hostile requests' answers by status, and the
 * server's peak resident memory (VmHWM).
 */
import { ChildProcess, spawn } from 'node:child_process';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, constants } from 'node:zlib';
import { childEnv, freePort } from './processes';
import { envInt, percentile, round3 } from './stats';

const ROOT = join(__dirname, '../..');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function startServer(): Promise<{ child: ChildProcess; url: string; dir: string }> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'cds-hostile-'));
  const db: Record<string, string> = process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : { DATA_DIR: join(dir, 'data') };
  const child = spawn(process.execPath, [process.env.SERVER_JS ?? join(ROOT, 'dist/src/main.js')], {
    env: childEnv({ ...db, PORT: String(port), DEMO_SEED: 'false', WORKER_ENABLED: 'false', RATE_LIMIT_PER_MINUTE: '1000000', LOG_LEVEL: 'error' }, ['CONNECTIONS', 'PROBE_S', 'SERVER_JS']),
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(`${url}/v1/health`)).status === 200) return { child, url, dir };
    } catch {
      // not listening yet
    }
    await sleep(200);
  }
  child.kill('SIGKILL');
  throw new Error('the server did not start in 120 s');
}

/**
 * A health check every 20 ms (open loop: one does not wait for the last, so a stalled server
 * shows as many slow checks, not as one) until `until()` is true; each one's time in ms.
 */
async function probe(url: string, until: () => boolean): Promise<number[]> {
  const checks: Promise<number>[] = [];
  while (!until()) {
    checks.push(
      (async () => {
        const t0 = performance.now();
        try {
          await (await fetch(`${url}/v1/health`, { signal: AbortSignal.timeout(60_000) })).text();
        } catch {
          // counted as its time: a health check that does not answer is the worst case
        }
        return performance.now() - t0;
      })(),
    );
    await sleep(20);
  }
  return Promise.all(checks);
}

const summary = (times: number[]) => {
  const sorted = [...times].sort((a, b) => a - b);
  return { checks: sorted.length, p50_ms: round3(percentile(sorted, 50)), p99_ms: round3(percentile(sorted, 99)), max_ms: round3(sorted[sorted.length - 1] ?? 0) };
};

/** One connection, one hostile request; resolves with the status (0: no answer, cut or refused). */
function hostile(port: number, body: Buffer): Promise<number> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    const done = (status: number) => {
      socket.destroy();
      resolve(status);
    };
    socket.setTimeout(60_000, () => done(0));
    socket.on('error', () => done(0));
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (text.includes('\r\n\r\n')) done(Number(text.slice(9, 12)));
    });
    socket.on('connect', () => {
      socket.write(
        `POST /v1/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Encoding: br\r\nContent-Length: ${body.length}\r\n\r\n`,
      );
      socket.write(body);
    });
  });
}

async function main(): Promise<void> {
  const connections = envInt('CONNECTIONS', 2000, 20_000);
  const probeS = envInt('PROBE_S', 5, 120);
  const text = `{"email":"${'x'.repeat(1_000_000)}"}`;
  const body = brotliCompressSync(Buffer.from(text), {
    params: { [constants.BROTLI_PARAM_QUALITY]: 11 },
  });
  const { child, url, dir } = await startServer();
  try {
    const port = Number(new URL(url).port);
    const baselineEnd = Date.now() + probeS * 1000;
    const baseline = await probe(url, () => Date.now() > baselineEnd);

    let finished = false;
    const statuses: Record<string, number> = {};
    const probing = probe(url, () => finished);
    const started = performance.now();
    await Promise.all(
      Array.from({ length: connections }, async () => {
        const status = await hostile(port, body);
        statuses[status] = (statuses[status] ?? 0) + 1;
      }),
    );
    const hostileMs = performance.now() - started;
    finished = true;
    const underLoad = await probing;
    const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1];
    console.log(
      JSON.stringify(
        {
          server: process.env.SERVER_JS ?? 'dist/src/main.js',
          connections,
          body_bytes: body.length,
          inflated_bytes: text.length,
          baseline_health: summary(baseline),
          health_under_hostile_load: summary(underLoad),
          hostile_answers_by_status: statuses,
          hostile_all_answered_ms: Math.round(hostileMs),
          server_peak_rss_mb: hwm ? Math.round(Number(hwm) / 1024) : null,
        },
        null,
        2,
      ),
    );
  } finally {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
