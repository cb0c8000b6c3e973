/**
 * Event webhook throughput: deliveries per second to a local 2xx receiver and the outbox lag,
 * under a renewal load (every renewal that ends is one operation.succeeded event, one delivery
 * to the one subscribed endpoint). Starts its own server process (node dist/src/main.js, the
 * worker in it, WEBHOOK_ALLOW_PRIVATE_URLS=true) and receiver on 127.0.0.1, on a database of its
 * own, removed at the end.
 *
 *   npm run build
 *   node dist/bench/webhooks.js                                                        # embedded engine
 *   DATABASE_URL=postgresql://postgres@127.0.0.1:5432/cds_dev node dist/bench/webhooks.js   # a fresh schema, dropped after
 *
 * Settings (environment): RENEWALS (3000, at most 20000), CONCURRENCY (50, at most 256),
 * WEBHOOK_CONCURRENCY (passed to the server when set).
 *
 * Prints: renewals accepted per second; deliveries received per second (first to last
 * receipt) and during the load; the end-to-end delay from an operation's finished_at to its
 * receipt (p50, p99, max: the outbox lag as a receiver sees it); the outbox lag the server
 * reports (cds_webhook_outbox_lag_seconds, sampled every 250 ms: p50 and max); and checks (every
 * operation received at least once). Figures are printed, never asserted.
 *
 * The ceiling, measured in the same run once the server has stopped: this process POSTs as many
 * signed bodies of the same size to the same receiver, as many at a time as the service may send
 * to one endpoint (MAX_IN_FLIGHT_PER_ENDPOINT, 4, every process together), over
 * kept-alive connections, HMAC-SHA256 computed per request as the service does (no database, no
 * outbox): `ceiling.per_s`, and `ceiling.ratio` = the service's first-to-last rate over it. The
 * service's rate is also bounded by how fast the renewals end, so the ratio is a floor of what
 * the delivery workers alone reach.
 */
import http from 'node:http';
import { spawnSync } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_IN_FLIGHT_PER_ENDPOINT } from '../src/modules/webhooks/domain/webhook';
import { ROOT, childEnv, createDatabase, freePort, sleep, spawnNode } from './harness';
import { envInt, percentile, round3 } from './stats';

async function main(): Promise<void> {
  const renewals = envInt('RENEWALS', 3000, 20_000);
  const concurrency = envInt('CONCURRENCY', 50, 256);
  const db = await createDatabase('webhooks');
  const tmp = mkdtempSync(join(tmpdir(), 'cds-bench-webhooks-'));
  const received = new Map<string, number>();
  let firstAt = 0;
  let lastAt = 0;
  let sampleBody = '';
  let ceilingReceived = 0;
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const now = Date.now();
      const text = Buffer.concat(chunks).toString('utf8');
      const event = JSON.parse(text) as { data: { id: string; finished_at?: string } };
      if (req.url === '/ceiling') {
        ceilingReceived += 1;
        res.writeHead(204).end();
        return;
      }
      sampleBody ||= text;
      if (!received.has(event.data.id)) received.set(event.data.id, now - Date.parse(event.data.finished_at ?? new Date(now).toISOString()));
      firstAt ||= now;
      lastAt = now;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const receiverPort = (receiver.address() as AddressInfo).port;
  const loadStart = loadavg().map((l) => Math.round(l * 100) / 100);
  let server: ReturnType<typeof spawnNode> | undefined;
  try {
    // Migrate and seed (CLI), one organization, one volume per renewal.
    const cli = (args: string[]): string => {
      const r = spawnSync(process.execPath, ['dist/src/cli/main.js', ...args], { cwd: ROOT, env: childEnv({ ...db.env, LOG_LEVEL: 'warn' }), encoding: 'utf8', timeout: 600_000, maxBuffer: 64 << 20 });
      if (r.status !== 0) throw new Error(`cli ${args[0]} exited ${r.status}: ${r.stderr}`);
      return r.stdout;
    };
    cli(['migrate']);
    const file = join(tmp, 'seed.json');
    writeFileSync(file, JSON.stringify({
      regions: [{
        id: 'id-jkt', name: 'Jakarta', capacity_gb: renewals * 10 + 1000, zones: [{ id: 'id-jkt-a', available: true }],
        volume_offers: [{ type: 'premium', min_gb: 10, max_gb: 4000, step_gb: 10, terms: [1, 3, 12], per_server_limit: 8, price_per_gb_month: { USD: '0.02000', IDR: '320' } }],
      }],
      organizations: [{
        name: 'Webhooks bench', wallet: { USD: String(renewals + 100) + '.00000' },
        members: [{ email: `bench-${randomBytes(4).toString('hex')}@bench.test`, password: randomBytes(18).toString('base64'), role: 'owner' }],
        api_keys: [{ name: 'bench', scopes: ['vm:read', 'vm:write', 'webhooks:write'] }],
        servers: [],
        volumes: Array.from({ length: renewals }, (_, i) => ({ name: `w-${i + 1}`, type: 'premium', region: 'id-jkt', zone: 'id-jkt-a', size_gb: 10, term_months: 1, currency: 'USD' })),
      }],
    }));
    const seeded = JSON.parse(cli(['seed', file])) as { organizations: { api_keys: { token: string }[]; volumes: string[] }[] };
    const token = seeded.organizations[0].api_keys[0].token;
    const volumes = seeded.organizations[0].volumes;

    const port = await freePort();
    const metricsPort = await freePort();
    server = spawnNode('dist/src/main.js', childEnv({
      ...db.env, PORT: String(port), HOST: '127.0.0.1', METRICS_PORT: String(metricsPort), RATE_LIMIT_PER_MINUTE: '1000000', DEMO_SEED: 'false',
      WORKER_ENABLED: 'true', LOG_LEVEL: 'warn', DB_POOL_SIZE: '20', WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      ...(process.env.WEBHOOK_CONCURRENCY ? { WEBHOOK_CONCURRENCY: process.env.WEBHOOK_CONCURRENCY } : {}),
    }), port);
    const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency + 4 });
    const call = (method: string, path: string, body?: object): Promise<{ status: number; body: string }> =>
      new Promise((resolve, reject) => {
        const text = body ? JSON.stringify(body) : undefined;
        const req = http.request({ host: '127.0.0.1', port, method, path, agent, headers: { Authorization: `Bearer ${token}`, ...(text ? { 'Content-Type': 'application/json' } : {}) } }, (res) => {
          let out = '';
          res.on('data', (c: Buffer) => (out += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: out }));
        });
        req.on('error', reject);
        req.end(text);
      });
    for (const deadline = Date.now() + 60_000; ; await sleep(100)) {
      if ((await call('GET', '/v1/health').catch(() => undefined))?.status === 200) break;
      if (Date.now() > deadline) throw new Error(`server did not start:\n${server.output()}`);
    }
    const created = await call('POST', '/v1/webhook-endpoints', { url: `http://127.0.0.1:${receiverPort}/hook`, events: ['operation.succeeded', 'operation.failed'] });
    if (created.status !== 201) throw new Error(`creating the endpoint answered ${created.status} ${created.body}`);

    // The outbox lag the server reports, sampled while the load runs and until every delivery arrived.
    const lags: number[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const text = await new Promise<string>((resolve) => {
          http.get({ host: '127.0.0.1', port: metricsPort, path: '/metrics' }, (res) => {
            let out = '';
            res.on('data', (c: Buffer) => (out += c.toString()));
            res.on('end', () => resolve(out));
          }).on('error', () => resolve(''));
        });
        const m = /^cds_webhook_outbox_lag_seconds ([\d.e+-]+)$/m.exec(text);
        if (m) lags.push(Number(m[1]));
        await sleep(250);
      }
    })();

    const started = Date.now();
    let next = 0;
    let accepted = 0;
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (next < volumes.length) {
        const r = await call('POST', `/v1/volumes/${volumes[next++]}/renew`, { term_months: 1 });
        if (r.status === 202) accepted += 1;
      }
    }));
    const loadEnded = Date.now();
    const receivedDuringLoad = received.size;
    for (const deadline = Date.now() + 300_000; received.size < accepted && Date.now() < deadline; ) await sleep(100);
    sampling = false;
    await sampler;
    await server.stop();
    server = undefined;
    const ceiling = await senderCeiling(receiverPort, sampleBody, received.size, MAX_IN_FLIGHT_PER_ENDPOINT);
    if (ceilingReceived !== received.size) throw new Error(`the ceiling's receiver counted ${ceilingReceived} of ${received.size}`);
    const perS = round3(received.size / Math.max(0.001, (lastAt - firstAt) / 1000));
    const delays = [...received.values()].sort((a, b) => a - b);
    const lagSorted = [...lags].sort((a, b) => a - b);
    process.stdout.write(JSON.stringify({
      engine: db.engine,
      load_average_at_start: loadStart,
      renewals: { sent: volumes.length, accepted, accepted_per_s: round3(accepted / ((loadEnded - started) / 1000)) },
      deliveries: {
        received: received.size,
        all_received: received.size === accepted,
        per_s_first_to_last: perS,
        per_s_during_load: round3(receivedDuringLoad / ((loadEnded - started) / 1000)),
        finished_to_received_ms: { p50: percentile(delays, 50), p99: percentile(delays, 99), max: delays[delays.length - 1] ?? null },
      },
      ceiling: { per_s: ceiling, ratio: round3(perS / ceiling) },
      outbox_lag_seconds_reported: { samples: lagSorted.length, p50: percentile(lagSorted, 50) ?? null, max: lagSorted[lagSorted.length - 1] ?? null },
      load_average_at_end: loadavg().map((l) => Math.round(l * 100) / 100),
    }, null, 2) + '\n');
  } finally {
    await server?.stop();
    receiver.closeAllConnections();
    receiver.close();
    await db.drop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** Deliveries per second of a bare signed sender: `count` POSTs of `body`, `concurrency` at a time, kept-alive. */
async function senderCeiling(port: number, body: string, count: number, concurrency: number): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const key = randomBytes(24);
  let next = 0;
  const started = Date.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < count) {
      const id = `evt_ceiling${next++}`;
      const timestamp = String(Math.floor(Date.now() / 1000));
      const signature = `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
      await new Promise<void>((resolve, reject) => {
        const req = http.request(
          { host: '127.0.0.1', port, method: 'POST', path: '/ceiling', agent, headers: { 'Content-Type': 'application/json', 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature } },
          (res) => res.resume().on('end', () => resolve()),
        );
        req.on('error', reject);
        req.end(body);
      });
    }
  }));
  agent.destroy();
  return round3(count / Math.max(0.001, (Date.now() - started) / 1000));
}

main().catch((err: unknown) => {
  process.stderr.write(`webhooks bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
