/**
 * Load benchmark of GET /v1/volume-options against a server that is already running.
 *
 *   npm run build
 *   TOKEN=cds_live_... BASE_URL=http://127.0.0.1:3000 node dist/bench/volume-options.js
 *
 * Settings (environment): TOKEN (required: an API key with vm:read), BASE_URL (default
 * http://127.0.0.1:3000; only 127.0.0.1 or localhost), REGION (id-jkt), TYPE (premium),
 * CONCURRENCY (16, at most 256), DURATION_S (10, at most 60), MAX_REQUESTS (100000, at most
 * 1000000). Start the server with a high RATE_LIMIT_PER_MINUTE, or the limiter answers 429.
 * Prints one JSON object: requests, errors, status counts, requests per second and latency
 * percentiles in milliseconds. Figures, not assertions.
 */
import http from 'node:http';
import { envInt, percentile, round3 } from './stats';


async function main(): Promise<void> {
  const token = process.env.TOKEN;
  if (!token) throw new Error('TOKEN is required: an API key with vm:read');
  const base = new URL(process.env.BASE_URL || 'http://127.0.0.1:3000');
  if (base.protocol !== 'http:' || !['127.0.0.1', 'localhost'].includes(base.hostname)) {
    throw new Error('BASE_URL must be http://127.0.0.1:<port> (this benchmark only loads the local machine)');
  }
  const region = process.env.REGION || 'id-jkt';
  const type = process.env.TYPE || 'premium';
  const concurrency = envInt('CONCURRENCY', 16, 256);
  const durationMs = envInt('DURATION_S', 10, 60) * 1000;
  const maxRequests = envInt('MAX_REQUESTS', 100_000, 1_000_000);

  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const path = `/v1/volume-options?region=${encodeURIComponent(region)}&type=${encodeURIComponent(type)}`;
  const once = (): Promise<{ status: number; ms: number }> =>
    new Promise((resolve, reject) => {
      const started = process.hrtime.bigint();
      const req = http.request(
        { host: '127.0.0.1', port: base.port || 80, path, method: 'GET', agent, headers: { Authorization: `Bearer ${token}` } },
        (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: Number(process.hrtime.bigint() - started) / 1e6 }));
        },
      );
      req.setTimeout(10_000, () => req.destroy(new Error('request timed out after 10 s')));
      req.on('error', reject);
      req.end();
    });

  const first = await once();
  if (first.status !== 200) throw new Error(`The first request answered ${first.status}; check TOKEN, REGION and the rate limit`);
  // Warm-up: connections, JIT, the catalog cache.
  const warmUntil = Date.now() + 1000;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (Date.now() < warmUntil) await once();
  }));

  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let errors = 0;
  let issued = 0;
  const started = process.hrtime.bigint();
  const deadline = Date.now() + durationMs;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < deadline && issued < maxRequests) {
        issued++;
        try {
          const r = await once();
          latencies.push(r.ms);
          statuses[r.status] = (statuses[r.status] ?? 0) + 1;
        } catch {
          errors++;
        }
      }
    }),
  );
  const elapsedS = Number(process.hrtime.bigint() - started) / 1e9;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  process.stdout.write(
    JSON.stringify(
      {
        endpoint: `GET ${path}`,
        concurrency,
        duration_s: round3(elapsedS),
        requests: latencies.length,
        errors,
        statuses,
        requests_per_s: Math.round(latencies.length / elapsedS),
        latency_ms: {
          p50: round3(percentile(latencies, 50)),
          p90: round3(percentile(latencies, 90)),
          p99: round3(percentile(latencies, 99)),
          max: round3(latencies[latencies.length - 1] ?? 0),
        },
      },
      null,
      2,
    ) + '\n',
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
