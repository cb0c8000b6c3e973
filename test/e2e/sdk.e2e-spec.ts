import { scaled } from '../support/deadlines';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync, symlinkSync, mkdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import {
  ApiError,
  CloudDisk,
  ConnectionError,
  InsufficientBalanceError,
  InvalidRequestError,
  NotFoundError,
  RateLimitedError,
  RetryInfo,
  TimeoutError,
  WebhookVerificationError,
  userAgent,
} from '../../sdk/src/index';
import { AdvanceOperations } from '../../src/modules/operations/application/advance-operations.use-case';
import { OperationSignals } from '../../src/modules/operations/application/operation-signals.port';
import { DeliverWebhooks } from '../../src/modules/webhooks/application/deliver-webhooks.use-case';
import { Clock } from '../../src/shared/kernel/clock/clock';
import { testedBlocks } from '../support/docs';
import { OWNER_PASSWORD, apiToken, orgWithDetachedVolumes, organization } from '../support/fixtures';
import { validatedFetch } from '../support/openapi-validation';
import { ROOT, childEnv, tempDir } from '../support/processes';
import { waitFor } from '../support/renewals';
import { TestApp, startTestApp } from '../support/test-app';
import { WebhookReceiver } from '../support/webhook-receiver';

/** The service's clock: real time, or a time a test holds it at (the rate limit's windows). */
class HeldClock extends Clock {
  private held: number | undefined;
  now(): Date {
    return new Date(this.held ?? Date.now());
  }
  hold(ms: number | undefined): void {
    this.held = ms;
  }
}

/** A request as the service's HTTP server received it, and the status it answered. */
interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  status?: number;
  /** The Retry-After it answered, if any. */
  retryAfter?: string;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a program without blocking this process (the service answering it runs here). */
function exec(file: string, args: string[], options: { cwd?: string; env?: Record<string, string | undefined>; input?: string; timeoutMs?: number } = {}): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(
      file,
      args,
      { cwd: options.cwd ?? ROOT, env: childEnv(options.env ?? {}), timeout: options.timeoutMs ?? 120_000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => resolve({ code: err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : null) : 0, stdout, stderr }),
    );
    child.stdin?.on('error', () => undefined); // a child that exits before reading its input
    child.stdin?.end(options.input ?? '');
  });
}

const LIMIT = 30;
const SCOPES = ['vm:read', 'vm:write', 'billing:read', 'billing:write', 'webhooks:write'];
const DEMO = JSON.parse(readFileSync(join(ROOT, 'seeds/demo.json'), 'utf8')) as { organizations: object[] } & Record<string, unknown>;
const CDS = join(ROOT, 'sdk/dist/esm/cli/main.js');

/**
 * @cloud-disk/sdk and cds against the real service (one app for the file, embedded engine or
 * PostgreSQL, listening on 127.0.0.1): what the SDK does is counted where the service receives it.
 * The service runs no worker: the tests run the operations (and webhook deliveries) themselves, so
 * that a wait is seen waiting; the cds part runs them whenever work is committed, as the worker does.
 */
describe('@cloud-disk/sdk and cds against the service', () => {
  let t: TestApp;
  let base: string;
  let demoKey: string;
  const clock = new HeldClock();
  const seen: Seen[] = [];
  const key = (kind: string) => apiToken('sk', kind);
  // The SDK's fetch here validates every answer against the served document (a custom fetch, as an integrator may pass).
  const sdk = (token: string, options: Partial<ConstructorParameters<typeof CloudDisk>[0]> = {}) => new CloudDisk({ baseUrl: base, token, fetch: validatedFetch, ...options });
  const requests = (pattern: RegExp) => seen.filter((r) => pattern.test(`${r.method} ${r.url}`));
  const advance = () => t.app.get(AdvanceOperations).runUntilIdle();

  beforeAll(async () => {
    if (!existsSync(CDS)) {
      const built = await exec(process.execPath, ['sdk/scripts/build.mjs']);
      expect(built).toMatchObject({ code: 0 });
    }
    t = await startTestApp({ rateLimitPerMinute: LIMIT, webhookAllowPrivateUrls: true }, clock);
    const sk = orgWithDetachedVolumes('sk', 5);
    const result = await t.seed({
      ...DEMO,
      organizations: [
        ...DEMO.organizations,
        {
          ...sk,
          api_keys: ['rw', 'wait', 'cut', 'rl', 'page', 'err', 'hook'].map((kind) => ({ name: kind, scopes: SCOPES, token: key(kind) })),
        },
        organization('poor', { wallet: { USD: '1.00000', IDR: '0' }, api_keys: [{ name: 'rw', scopes: SCOPES, token: apiToken('poor', 'rw') }] }),
        organization('cl', { wallet: { USD: '0.00000', IDR: '0' }, servers: [], volumes: [], api_keys: [{ name: 'tutorial', scopes: SCOPES, token: apiToken('cl', 'rw') }] }),
        organization('ex', { wallet: { USD: '25.00000', IDR: '0' }, servers: [], volumes: [], api_keys: [{ name: 'example', scopes: SCOPES, token: apiToken('ex', 'rw') }] }),
      ],
    });
    demoKey = result.organizations[0].api_keys[0].token;
    const server = t.app.getHttpServer() as http.Server;
    // Every request the service receives, as it receives it, with the status it answered.
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      const entry: Seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers };
      seen.push(entry);
      res.on('finish', () => {
        entry.status = res.statusCode;
        const retryAfter = res.getHeader('retry-after');
        if (retryAfter !== undefined) entry.retryAfter = String(retryAfter);
      });
    });
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // validatedFetch reads the served document once per origin: now, so that no test sees that request.
    await validatedFetch(`${base}/v1/health`);
  }, scaled(120_000));
  afterAll(async () => t?.close());

  it('servers.create with wait: true returns the running server after one long-poll request (?wait=60), no polling, counted at the service', async () => {
    const client = sdk(key('wait'));
    const from = seen.length;
    const buying = client.servers.create({ name: 'sdk-wait', region: 'id-jkt', plan: 'cx1', image: 'ubuntu-24.04', term_months: 1, currency: 'USD' }, { wait: true });
    // The SDK is waiting on the long-poll; only then does the operation run.
    await waitFor('the long-poll', async () => requests(/^GET \/v1\/operations\/op_\w+\?wait=60$/).length > 0, 30_000);
    expect(await advance()).toMatchObject({ claimed: 1, succeeded: 1, failed: 0 });
    const { server, operation } = await buying;

    const [row] = await t.sql<{ id: string; ipv4: string }>(`SELECT id, ipv4 FROM servers WHERE name = 'sdk-wait'`);
    expect(server).toMatchObject({ id: row.id, name: 'sdk-wait', status: 'running', plan: 'cx1', ipv4: row.ipv4, volume_ids: [] });
    expect(operation).toMatchObject({ type: 'vm.create', status: 'succeeded', vm_id: row.id, error: null, result: { server_id: row.id, ipv4: row.ipv4, charged: { amount: '4.50000', currency: 'USD' } } });
    expect(operation.steps.map((s) => `${s.name}:${s.status}`)).toEqual(['payment_reserved:succeeded', 'creating_instance:succeeded', 'booting:succeeded', 'ready:succeeded']);
    // What the service received from the SDK: the purchase (with an Idempotency-Key and the SDK's user agent),
    // ONE long-poll of the operation, one read of the server. Nothing else: no loop.
    const mine = seen.slice(from).filter((r) => r.headers.authorization === `Bearer ${key('wait')}`);
    expect(mine.map((r) => `${r.method} ${r.url} ${r.status}`)).toEqual([
      'POST /v1/servers 202',
      `GET /v1/operations/${operation.id}?wait=60 200`,
      `GET /v1/servers/${row.id} 200`,
    ]);
    expect(mine[0].headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
    expect(mine[1].headers['if-none-match']).toBeUndefined();
    for (const r of mine) expect(r.headers['user-agent']).toBe(userAgent());
    expect(userAgent()).toBe(`cloud-disk-sdk-js/1.0.0 node/${process.version}`);
    // Charged once: one hold captured, 4.50000 USD.
    expect(await t.sql(`SELECT kind, amount::text AS amount FROM wallet_ledger WHERE operation_id = $1 ORDER BY id`, [operation.id])).toEqual([
      { kind: 'hold', amount: '450000' },
      { kind: 'capture', amount: '450000' },
    ]);
  });

  it('operations.wait: long-polls with If-None-Match (304 while nothing changes), one request per pollSeconds at most; a timeout and an AbortSignal end it', async () => {
    const client = sdk(key('wait'));
    const { operation: accepted } = await client.volumes.renew('vol_skv1', { term_months: 1 });
    const polls = () => requests(new RegExp(`^GET /v1/operations/${accepted.id}\\?`));

    // Time runs out: a TimeoutError holding the operation as last read.
    const waited = Date.now();
    const timedOut = await client.operations.wait(accepted.id, { pollSeconds: 1, timeout: 1500 }).catch((e: unknown) => e);
    expect(timedOut).toBeInstanceOf(TimeoutError);
    expect((timedOut as TimeoutError).operation).toMatchObject({ id: accepted.id, status: 'pending' });
    expect(Date.now() - waited).toBeGreaterThanOrEqual(1000);

    // Aborted by the caller while a long-poll is in flight: rejected with the signal's reason.
    const controller = new AbortController();
    const aborted = client.operations.wait(accepted.id, { pollSeconds: 60, signal: controller.signal }).catch((e: unknown) => e);
    const before = polls().length;
    await waitFor('the aborted wait\'s long-poll', async () => polls().length > before, 10_000);
    controller.abort(new Error('stop waiting'));
    expect(await aborted).toEqual(new Error('stop waiting'));

    // Waited until it ends: the first request without If-None-Match, the next ones with the ETag it got, answered 304.
    const from = polls().length;
    const started = Date.now();
    const waiting = client.operations.wait(accepted.id, { pollSeconds: 1 });
    await waitFor('two long-polls', async () => polls().length >= from + 2, 20_000);
    await advance();
    const ended = await waiting;
    const took = Date.now() - started;
    expect(ended).toMatchObject({ id: accepted.id, type: 'volume.renew', status: 'succeeded', error: null });
    const mine = polls().slice(from);
    const etag = (await t.http.get(`/v1/operations/${accepted.id}`).set({ Authorization: `Bearer ${key('wait')}` })).headers.etag;
    expect(mine.every((r) => r.url === `/v1/operations/${accepted.id}?wait=1`)).toBe(true);
    expect(mine[0].headers['if-none-match']).toBeUndefined();
    // Before the end each later request carried the pending operation's ETag and got 304; the last one the end (200).
    expect(mine.slice(1).every((r) => typeof r.headers['if-none-match'] === 'string' && r.headers['if-none-match'] !== etag)).toBe(true);
    expect(mine.slice(1, -1).map((r) => r.status)).toEqual(mine.slice(1, -1).map(() => 304));
    expect(mine.at(-1)!.status).toBe(200);
    // Each unchanged answer came after its second of waiting: never more requests than seconds waited, plus the first.
    expect(mine.length).toBeLessThanOrEqual(Math.floor(took / 1000) + 1);
  });

  it('a create whose answer a proxy cuts is retried with the same Idempotency-Key: one server, one charge, the first answer replayed', async () => {
    // A proxy between the SDK and the service that lets the first purchase reach the service and drops its answer.
    let cut = true;
    const proxy = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const upstream = http.request(`${base}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
          const body: Buffer[] = [];
          answer.on('data', (c: Buffer) => body.push(c));
          answer.on('end', () => {
            if (cut && req.method === 'POST') {
              cut = false;
              res.socket?.destroy();
              return;
            }
            res.writeHead(answer.statusCode ?? 502, answer.headers).end(Buffer.concat(body));
          });
        });
        upstream.end(Buffer.concat(chunks));
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const retries: RetryInfo[] = [];
    try {
      const client = new CloudDisk({ baseUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, token: key('cut'), fetch: validatedFetch, onRetry: (r) => retries.push(r) });
      const from = seen.length;
      const { server, operation } = await client.servers.create({ name: 'sdk-cut', region: 'id-jkt', plan: 'cx1', image: 'ubuntu-24.04', term_months: 1, currency: 'USD' });

      const posts = seen.slice(from).filter((r) => r.method === 'POST');
      expect(posts.map((r) => `${r.method} ${r.url} ${r.status}`)).toEqual(['POST /v1/servers 202', 'POST /v1/servers 202']);
      expect(posts[1].headers['idempotency-key']).toBe(posts[0].headers['idempotency-key']);
      expect(retries).toEqual([{ operationId: 'purchaseServer', attempt: 1, delayMs: expect.any(Number), error: expect.any(ConnectionError), idempotencyKey: posts[0].headers['idempotency-key'] }]);
      expect(retries[0].delayMs).toBeGreaterThanOrEqual(250);
      // One server, one operation, one hold: the retry was answered with the first answer.
      expect(await t.sql(`SELECT id, status FROM servers WHERE name = 'sdk-cut'`)).toEqual([{ id: server.id, status: 'creating' }]);
      expect(await t.sql(`SELECT id FROM operations WHERE vm_id = $1`, [server.id])).toEqual([{ id: operation.id }]);
      expect(await t.sql(`SELECT kind, amount::text AS amount FROM wallet_ledger WHERE operation_id = $1`, [operation.id])).toEqual([{ kind: 'hold', amount: '450000' }]);
      await advance();
      expect(await t.sql(`SELECT available::text AS available FROM wallet_balances WHERE org_id = 'org_sk' AND currency = 'USD'`)).toEqual([
        // 100 USD, minus the two purchases of this file (4.50000 each) and the renewal of vol_skv1 (2.00000).
        { available: String(10_000_000 - 450_000 - 200_000 - 450_000) },
      ]);
    } finally {
      proxy.close();
    }
  });

  it('a 429 is waited out as its Retry-After says, then the call answers', async () => {
    const token = key('rl');
    for (let i = 0; i < LIMIT; i++) expect((await t.http.get('/v1/regions').set({ Authorization: `Bearer ${token}` })).status).toBe(200);
    const limited = await t.http.get('/v1/regions').set({ Authorization: `Bearer ${token}` });
    expect(limited.status).toBe(429);
    // The service's time held 1.5 s before the window ends (Retry-After: 2) until it answered the SDK's request 429,
    // then past the end: whatever the load of the machine, the SDK's first attempt is refused and its retry is not.
    const reset = Number(limited.headers['x-ratelimit-reset']) * 1000;
    clock.hold(reset - 1500);
    const retries: RetryInfo[] = [];
    const from = seen.length;
    const started = Date.now();
    const listing = sdk(token, { onRetry: (r) => retries.push(r) }).regions.list().toArray();
    let regions;
    try {
      await waitFor('the 429', async () => seen.slice(from).some((r) => r.status === 429), 30_000);
      clock.hold(reset + 1000);
      regions = await listing;
    } finally {
      clock.hold(undefined);
    }
    expect(regions.map((r) => r.id)).toEqual(['id-jkt', 'sg-sin']);
    expect(retries).toHaveLength(1);
    const error = retries[0].error as RateLimitedError;
    expect(error).toBeInstanceOf(RateLimitedError);
    const retryAfter = Number(seen.slice(from).find((r) => r.status === 429)!.retryAfter);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect({ code: error.code, status: error.status, retryable: error.retryable, retryAfter: error.retryAfter }).toEqual({ code: 'rate_limited', status: 429, retryable: true, retryAfter });
    expect(retries[0].delayMs).toBeGreaterThanOrEqual(retryAfter * 1000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(retryAfter * 1000);
    expect(seen.slice(from).filter((r) => r.headers.authorization === `Bearer ${token}`).map((r) => `${r.url} ${r.status}`)).toEqual(['/v1/regions 429', '/v1/regions 200']);
  });

  it('list iterates across pages, following next_cursor, a request per page as it is read', async () => {
    const client = sdk(key('page'));
    const from = seen.length;
    const names: string[] = [];
    for await (const volume of client.volumes.list({ limit: 2 })) names.push(volume.id);
    const expected = await t.sql<{ id: string }>(`SELECT id FROM volumes WHERE org_id = 'org_sk' AND status <> 'deleted' ORDER BY created_at DESC, id DESC`);
    expect(names).toEqual(expected.map((v) => v.id));
    expect(names).toHaveLength(5);
    const pages = seen.slice(from);
    expect(pages.map((r) => r.url.replace(/cursor=[^&]+/, 'cursor=…'))).toEqual(['/v1/volumes?limit=2', '/v1/volumes?limit=2&cursor=…', '/v1/volumes?limit=2&cursor=…']);
    // Pages on demand: the first page only; and a stop after 3 items asks for no third page.
    expect((await client.volumes.list({ limit: 2 }).firstPage()).volumes).toHaveLength(2);
    expect(await client.volumes.list({ limit: 2 }).toArray(3)).toHaveLength(3);
    expect(seen.length - from).toBe(3 + 1 + 2);
  });

  it('errors are typed per code, with the request id, details and retryable; a 4xx is never retried', async () => {
    const retries: RetryInfo[] = [];
    const poor = sdk(apiToken('poor', 'rw'), { onRetry: (r) => retries.push(r) });
    const from = seen.length;
    const refused = await poor.servers.create({ name: 'too-dear', region: 'id-jkt', plan: 'cx1', image: 'ubuntu-24.04', term_months: 1, currency: 'USD' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(InsufficientBalanceError);
    expect(refused).toBeInstanceOf(ApiError);
    const e = refused as InsufficientBalanceError;
    expect({ status: e.status, code: e.code, details: e.details, retryable: e.retryable }).toEqual({
      status: 402,
      code: 'insufficient_balance',
      details: { required: '4.50000', available: '1.00000', currency: 'USD' },
      retryable: false,
    });
    expect(e.requestId).toMatch(/^req_/);
    expect(e.requestId).toBe(e.headers.get('x-request-id'));
    expect(seen.slice(from)).toHaveLength(1);
    const missing = await sdk(key('err')).servers.get('vm_nothere').catch((x: unknown) => x);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect((missing as NotFoundError).message).toMatch(/^Server vm_nothere not found \(not_found, HTTP 404, request req_\w+\)$/);
    const invalid = await sdk(key('err')).volumes.renew('vol_skv2', { term_months: 2 as 1 }).catch((x: unknown) => x);
    expect(invalid).toBeInstanceOf(InvalidRequestError);
    expect((invalid as InvalidRequestError).details).toEqual({ field: 'term_months' });
    expect(retries).toEqual([]);
    expect(seen.length - from).toBe(3);
    // Sessions: login, X-Org-ID on every request, and a custom fetch.
    let fetched = 0;
    const session = await CloudDisk.login({ baseUrl: base, email: 'owner@sk.test', password: OWNER_PASSWORD, orgId: 'org_sk', fetch: (url, init) => (fetched++, validatedFetch(url, init)) });
    expect((await session.wallet.get()).balances.map((b) => b.currency)).toEqual(['USD', 'IDR']);
    expect(fetched).toBe(2);
    expect(seen.at(-1)).toMatchObject({ url: '/v1/wallet', headers: { 'x-org-id': 'org_sk', authorization: expect.stringMatching(/^Bearer cds_sess_/) } });
  });

  it('webhooks.verify accepts a real delivery and refuses a tampered one; during a rotation either secret verifies', async () => {
    const receiver = await WebhookReceiver.start();
    try {
      const client = sdk(key('hook'));
      const { webhook_endpoint: endpoint, secret } = await client.webhookEndpoints.create({ url: receiver.url('/hooks'), events: ['operation.succeeded'] });
      await client.webhookEndpoints.test(endpoint.id);
      await t.app.get(DeliverWebhooks).runUntilIdle();
      const [ping] = receiver.received;
      const event = client.webhooks.verify(ping.body, ping.headers, secret);
      expect(event).toEqual({ id: ping.headers['webhook-id'], type: 'ping', created_at: expect.any(String), data: { endpoint_id: endpoint.id } });
      if (event.type === 'ping') expect(event.data.endpoint_id).toBe(endpoint.id);
      expect(() => client.webhooks.verify(ping.body.replace(endpoint.id, 'we_someoneelse0000000000'), ping.headers, secret)).toThrow(WebhookVerificationError);
      expect(() => client.webhooks.verify(ping.body, { ...ping.headers, 'webhook-timestamp': String(Number(ping.headers['webhook-timestamp']) - 3600) }, secret)).toThrow(
        WebhookVerificationError,
      );

      // A rotation: deliveries carry both signatures; the old secret, the new one, or both verify; another does not.
      const rotated = await client.webhookEndpoints.rotateSecret(endpoint.id);
      await client.webhookEndpoints.test(endpoint.id);
      await t.app.get(DeliverWebhooks).runUntilIdle();
      const second = receiver.received[1];
      expect(String(second.headers['webhook-signature']).split(' ')).toHaveLength(2);
      for (const secrets of [secret, rotated.secret, [rotated.secret, secret]]) expect(client.webhooks.verify(second.body, second.headers, secrets).type).toBe('ping');
      expect(() => client.webhooks.verify(second.body, second.headers, 'whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYX')).toThrow(WebhookVerificationError);
      // The worked example of docs/reference/webhooks.md.
      const body = '{"id":"evt_Fx1Yk2Zl3Am4Bn5Co6Dp7Eq8","type":"ping","created_at":"2026-01-01T00:00:00.000Z","data":{"endpoint_id":"we_Gh1Ij2Kl3Mn4Op5Qr6St7Uv8"}}';
      const headers = { 'webhook-id': 'evt_Fx1Yk2Zl3Am4Bn5Co6Dp7Eq8', 'webhook-timestamp': '1767225600', 'webhook-signature': 'v1,iowEXLs4QuMVy5RBDd0bQ1K+zcVBtCYb4wnNWWtlvl4=' };
      expect(client.webhooks.verify(body, headers, 'whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYX', { now: new Date('2026-01-01T00:01:00Z') }).id).toBe('evt_Fx1Yk2Zl3Am4Bn5Co6Dp7Eq8');
      await client.webhookEndpoints.delete(endpoint.id);
    } finally {
      await receiver.close();
    }
  });

  it('the generated SDK is what the served OpenAPI document gives (a drift fails)', async () => {
    const dir = tempDir('cds-sdk-doc-');
    try {
      const served = await fetch(`${base}/v1/openapi.json`);
      writeFileSync(join(dir.path, 'openapi.json'), await served.text());
      expect(await exec(process.execPath, ['sdk/scripts/generate.mjs', '--check', join(dir.path, 'openapi.json')])).toEqual({ code: 0, stdout: '', stderr: '' });
    } finally {
      dir.remove();
    }
  });

  describe('the package: cds, and npm pack', () => {
    const home = tempDir('cds-home-');
    const bin = join(home.path, 'bin');
    let stopWorker: () => void = () => undefined;
    const env = () => ({ PATH: `${bin}:${process.env.PATH}`, XDG_CONFIG_HOME: join(home.path, 'config'), BASE: base, KEY: apiToken('cl', 'rw') });
    const cds = (args: string[]) => exec(CDS, args, { env: env() });

    beforeAll(() => {
      mkdirSync(bin, { recursive: true });
      symlinkSync(CDS, join(bin, 'cds'));
      // The worker's part: operations run whenever work is committed, one pass at a time.
      let pass: Promise<unknown> = Promise.resolve();
      stopWorker = t.app.get(OperationSignals).onWork(() => {
        pass = pass.then(advance).catch(() => undefined);
      });
    });
    afterAll(() => {
      stopWorker();
      home.remove();
    });

    it('the first-server tutorial with cds alone: context, SSH key, top-up paid, server create --wait, volume create --server, both deleted', async () => {
      const blocks = testedBlocks(ROOT, 'docs/tutorials/first-server-with-cds.md');
      expect(blocks.length).toBeGreaterThanOrEqual(5);
      const script = ['set -euo pipefail', ...blocks.map((b) => `${b.code}\necho "::ok ${b.file}:${b.line}"`)].join('\n');
      const run = await exec('bash', ['-c', script], { env: env() });
      const ran = [...run.stdout.matchAll(/^::ok (\S+)$/gm)].map((m) => m[1]);
      if (run.code !== 0 || ran.length !== blocks.length) throw new Error(`exit ${run.code}; blocks that ran: ${ran.join(', ')}\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`);

      // The context: saved 0600 in the user's config directory, the token in it.
      const file = join(home.path, 'config/cds/config.json');
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(statSync(join(home.path, 'config/cds')).mode & 0o777).toBe(0o700);
      expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ current: 'tutorial', contexts: { tutorial: { url: base, token: apiToken('cl', 'rw') } } });
      // What it left behind: the server and the disk bought and deleted, the SSH key on the server, paid by the top-up.
      const [server] = await t.sql<{ id: string; status: string; ssh_key_ids: string[] }>(`SELECT id, status FROM servers WHERE org_id = 'org_cl'`);
      expect(server).toMatchObject({ status: 'deleted' });
      expect(await t.sql(`SELECT name, status, server_id FROM volumes WHERE org_id = 'org_cl'`)).toEqual([{ name: 'app-data', status: 'deleted', server_id: null }]);
      expect(await t.sql(`SELECT type, status FROM operations WHERE org_id = 'org_cl' ORDER BY created_at`)).toEqual([
        { type: 'vm.create', status: 'succeeded' },
        { type: 'volume.create', status: 'succeeded' },
        { type: 'vm.delete', status: 'succeeded' },
        { type: 'volume.delete', status: 'succeeded' },
      ]);
      // 25.00000 paid in; the server 4.50000 and the disk 50 GB × 0.02000 charged once each; nothing refunded.
      const balance = await cds(['wallet', 'balance', '-o', 'json']);
      expect(balance.code).toBe(0);
      expect(JSON.parse(balance.stdout)).toEqual({
        balances: [
          { currency: 'USD', available: '19.50000', reserved: '0.00000' },
          { currency: 'IDR', available: '0', reserved: '0' },
        ],
      });
      const history = await cds(['wallet', 'history', '-o', 'json']);
      expect(JSON.parse(history.stdout).map((x: { type: string; amount: string }) => `${x.type} ${x.amount}`)).toEqual([
        'capture 1.00000',
        'hold 1.00000',
        'capture 4.50000',
        'hold 4.50000',
        'credit 25.00000',
      ]);
      const ops = await cds(['operation', 'list', '--server', server.id, '-o', 'yaml']);
      expect(ops.code).toBe(0);
      expect(ops.stdout).toMatch(/^- id: op_\w+\n {2}type: volume\.create\n/m);
      expect(run.stdout).toContain('ubuntu-24.04');
    });

    it('exit codes by error class, errors as JSON on stderr with -o json, --help with examples on every command, bash completion', async () => {
      const missing = await cds(['server', 'describe', 'vm_nothere', '-o', 'json']);
      expect(missing.code).toBe(5);
      expect(JSON.parse(missing.stderr)).toEqual({ error: { status: 404, code: 'not_found', message: expect.stringMatching(/^Server vm_nothere not found/), request_id: expect.stringMatching(/^req_/), details: {} } });
      // The same code from cds's run() in this process as from the program (the program exits with what run() resolves).
      const { run } = await import('../../sdk/src/cli/main');
      const inProcess = async (args: string[]) => {
        let stdout = '';
        let stderr = '';
        const code = await run(args, { stdout: (x) => (stdout += x), stderr: (x) => (stderr += x), stdin: async () => '', env: { XDG_CONFIG_HOME: join(home.path, 'config') } });
        return { code, stdout, stderr };
      };
      expect(await inProcess(['server', 'create', '--name', 'x'])).toEqual({ code: 2, stdout: '', stderr: 'Error: --region is required\nRun: cds server create --help\n' });
      expect((await inProcess(['volume', 'renew', 'vol_nope', '--term', '1', '--token', 'cds_live_wrongwrongwrongwrongwrongwrongwrong'])).code).toBe(3);
      expect((await inProcess(['volume', 'renew', 'vol_nope', '--term', '1'])).code).toBe(5);
      expect((await inProcess(['server', 'list', '--context', 'nope'])).code).toBe(2);
      const poor = await cds(['server', 'create', '--name', 'dear', '--region', 'id-jkt', '--plan', 'cx4', '--image', 'ubuntu-24.04', '--term', '12', '--token', apiToken('poor', 'rw')]);
      expect({ code: poor.code, stderr: poor.stderr }).toEqual({ code: 7, stderr: expect.stringMatching(/^Error: The wallet cannot cover 216\.00000 USD; available: 1\.00000 USD \(insufficient_balance, HTTP 402, request req_\w+\)\n$/) });
      // --help on every command, with examples (in this process: one program start per command would cost a second each).
      const { COMMANDS } = await import('../../sdk/src/cli/commands');
      for (const command of COMMANDS) {
        let out = '';
        const code = await run([...command.path, '--help'], { stdout: (x) => (out += x), stderr: (x) => (out += x), stdin: async () => '', env: {} });
        expect({ command: command.path.join(' '), code, examples: /\nExamples:\n {2}.*\bcds \S/.test(out) }).toEqual({ command: command.path.join(' '), code: 0, examples: true });
      }
      const help = await cds(['--help']);
      expect({ code: help.code, commands: help.stdout.includes('\nCommands:\n  context ') }).toEqual({ code: 0, commands: true });
      expect(COMMANDS.filter((c) => c.action).map((c) => c.path.join(' '))).toEqual([
        'server create', 'server start', 'server stop', 'server reboot', 'server renew', 'server delete', 'server resize', 'server rebuild',
        'volume create', 'volume attach', 'volume detach', 'volume renew', 'volume resize', 'volume delete',
      ]);
      const completion = await cds(['completion', 'bash']);
      const complete = async (line: string) => {
        const script = `${completion.stdout}\nCOMP_WORDS=(${line}); COMP_CWORD=$(( \${#COMP_WORDS[@]} - 1 )); _cds; echo "\${COMPREPLY[*]}"`;
        return (await exec('bash', ['-c', script])).stdout.trim();
      };
      expect(await complete('cds ser')).toBe('server');
      expect(await complete('cds server cr')).toBe('create');
      expect(await complete('cds volume create --se')).toBe('--server');
      expect(await complete("cds server list -o ''")).toBe('table json yaml');
      const zsh = await inProcess(['completion', 'zsh']);
      expect(zsh.stdout).toMatch(/^#compdef cds\n/);
      const hasZsh = (await exec('sh', ['-c', 'command -v zsh'])).code === 0;
      if (hasZsh) {
        // zsh's completion functions stubbed to print what the script offers.
        const script = join(home.path, '_cds');
        writeFileSync(script, zsh.stdout);
        const offer = async (words: string, current: number) =>
          (await exec('zsh', ['-f', '-c', `compdef(){}; compadd(){ print -r -- "\${@:2}" }; _describe(){ print -r -- "\${(P)2}" }; source ${script}; words=(${words}); CURRENT=${current}; _cds`])).stdout.trim();
        expect(await offer('cds server cr', 3)).toContain('create:Buy a server for a prepaid term, charged to the wallet');
        expect(await offer('cds server list -o x', 5)).toBe('table json yaml');
        expect((await offer('cds volume create --se', 4)).split(' ')).toContain('--server');
      } else console.log('zsh is not installed: the zsh completion script was not run by zsh');
    });

    it('cds volume resize: --dry-run prints the price; the resize with --wait grows the disk and charges that price for the rest of its term', async () => {
      const created = await cds(['volume', 'create', '--name', 'grow-me', '--region', 'id-jkt', '--size', '50', '--term', '1', '--wait', '-o', 'json']);
      expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
      const volume = JSON.parse(created.stdout).volume as { id: string; expires_at: string };
      const dry = await cds(['volume', 'resize', volume.id, '--size', '100', '--dry-run', '-o', 'json']);
      expect({ code: dry.code, stderr: dry.stderr }).toEqual({ code: 0, stderr: '' });
      // About 1.00000 (a full month of 50 GB more): a little less, or more when the term's month has 31 days.
      expect(JSON.parse(dry.stdout)).toEqual({ amount: { currency: 'USD', amount: expect.stringMatching(/^[01]\.\d{5}$/) } });
      const grown = await cds(['volume', 'resize', volume.id, '--size', '100', '--wait', '-o', 'json']);
      expect(grown.code).toBe(0);
      const answer = JSON.parse(grown.stdout) as { volume: { size_gb: number }; operation: { type: string; status: string; created_at: string; result: { charged: { amount: string } } } };
      expect(answer.volume.size_gb).toBe(100);
      expect(answer.operation).toMatchObject({ type: 'volume.resize', status: 'succeeded' });
      // 50 GB × 0.02000 USD × whole seconds left at acceptance / 30 days, rounded up.
      const seconds = BigInt(Math.floor((Date.parse(volume.expires_at) - Date.parse(answer.operation.created_at)) / 1000));
      const minor = (100000n * seconds + 2591999n) / 2592000n;
      expect(answer.operation.result.charged.amount).toBe(`${minor / 100000n}.${(minor % 100000n).toString().padStart(5, '0')}`);
      // The dry run, a moment earlier, priced at most one minor unit more.
      const dryMinor = BigInt(JSON.parse(dry.stdout).amount.amount.replace('.', ''));
      expect(dryMinor - minor >= 0n && dryMinor - minor <= 1n).toBe(true);
      expect((await cds(['volume', 'delete', volume.id, '--wait'])).code).toBe(0);
    });

    it('npm pack gives a package that installs in an empty directory and runs its README example against the demo service', async () => {
      const timings: Record<string, number> = {};
      let mark = Date.now();
      const lap = (what: string) => ((timings[what] = Date.now() - mark), (mark = Date.now()));
      const dir = tempDir('cds-pack-');
      try {
        const packed = await exec('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir.path], { cwd: join(ROOT, 'sdk') });
        expect(packed.code).toBe(0);
        lap('npm pack');
        const [{ filename, files }] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
        expect(files.map((f) => f.path)).toEqual(expect.arrayContaining(['package.json', 'README.md', 'dist/esm/index.js', 'dist/esm/index.d.ts', 'dist/cjs/index.js', 'dist/cjs/package.json', 'dist/esm/cli/main.js']));
        expect(files.some((f) => f.path.startsWith('src/') || f.path.startsWith('scripts/'))).toBe(false);
        const app = join(dir.path, 'app');
        mkdirSync(app);
        writeFileSync(join(app, 'package.json'), '{"name":"integrator","private":true,"type":"module"}\n');
        const installed = await exec('npm', ['install', '--offline', '--no-audit', '--no-fund', join(dir.path, filename)], { cwd: app });
        expect(installed).toMatchObject({ code: 0 });
        lap('npm install');
        // The README's example, as written, with the demo key.
        const readme = readFileSync(join(ROOT, 'sdk/README.md'), 'utf8');
        const example = /```js example\n([\s\S]*?)```/.exec(readme)![1];
        writeFileSync(join(app, 'example.mjs'), example);
        const ran = await exec(process.execPath, ['example.mjs'], { cwd: app, env: { CDS_URL: base, CDS_TOKEN: demoKey } });
        expect({ code: ran.code, stderr: ran.stderr }).toEqual({ code: 0, stderr: '' });
        lap('README example');
        const [bought] = await t.sql<{ id: string; status: string; ipv4: string | null }>(`SELECT id, status, ipv4 FROM servers WHERE name = 'readme-1'`);
        expect(bought).toMatchObject({ status: 'deleted', ipv4: null });
        const [ip] = await t.sql<{ ipv4: string }>(`SELECT result->>'ipv4' AS ipv4 FROM operations WHERE vm_id = $1 AND type = 'vm.create'`, [bought.id]);
        expect(ran.stdout.trim().split('\n')).toEqual([
          'Regions: id-jkt, sg-sin',
          `${bought.id} is running at ${ip.ipv4}; vm.create succeeded`,
          'Charged 4.50000 USD',
          'Wallet: 95.50000 USD, 1500000 IDR',
          expect.stringMatching(/^not_found: quote req_\w+ to support$/),
        ]);
        // CommonJS and the bin, from the installed package.
        const cjs = await exec(process.execPath, ['-e', "const { CloudDisk, SDK_VERSION } = require('@cloud-disk/sdk'); console.log(typeof CloudDisk, SDK_VERSION)"], { cwd: app });
        expect(cjs.stdout).toBe('function 1.0.0\n');
        const version = await exec(join(app, 'node_modules/.bin/cds'), ['version', '-o', 'json'], { cwd: app });
        expect(JSON.parse(version.stdout)).toEqual({ cds: '1.0.0', api: '1' });
        lap('CommonJS and the bin');

        // The SDK example (the SDK variant of the first-server tutorial, shown whole on its page), type-checked
        // with --strict against the installed package's declarations, compiled, and run.
        const source = readFileSync(join(ROOT, 'examples/sdk/first-server.ts'), 'utf8');
        expect(readFileSync(join(ROOT, 'docs/tutorials/first-server-with-the-sdk.md'), 'utf8')).toContain(`\`\`\`ts\n${source}\`\`\``);
        writeFileSync(join(app, 'first-server.ts'), source);
        const tsconfig = JSON.parse(readFileSync(join(ROOT, 'examples/sdk/tsconfig.json'), 'utf8'));
        writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({ ...tsconfig, compilerOptions: { ...tsconfig.compilerOptions, typeRoots: [join(ROOT, 'node_modules/@types')] } }));
        const compiled = await exec(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: app });
        expect({ code: compiled.code, stdout: compiled.stdout }).toEqual({ code: 0, stdout: '' });
        lap('example compiled');
        const sdkExample = await exec(process.execPath, ['dist/first-server.js'], { cwd: app, env: { CDS_URL: base, CDS_TOKEN: apiToken('ex', 'rw') } });
        expect({ code: sdkExample.code, stderr: sdkExample.stderr }).toEqual({ code: 0, stderr: '' });
        lap('example run');
        const [exServer] = await t.sql<{ id: string; status: string }>(`SELECT id, status FROM servers WHERE org_id = 'org_ex'`);
        const [exVolume] = await t.sql<{ id: string; status: string }>(`SELECT id, status FROM volumes WHERE org_id = 'org_ex'`);
        const [exKey] = await t.sql<{ id: string }>(`SELECT id FROM ssh_keys WHERE org_id = 'org_ex'`);
        const [exIp] = await t.sql<{ ipv4: string }>(`SELECT result->>'ipv4' AS ipv4 FROM operations WHERE vm_id = $1 AND type = 'vm.create'`, [exServer.id]);
        expect({ server: exServer.status, volume: exVolume.status }).toEqual({ server: 'deleted', volume: 'deleted' });
        expect(sdkExample.stdout.trim().split('\n')).toEqual([
          `ssh key ${exKey.id} SHA256:NHq3Wpc6QGXwgBHng1dkxZH5TgPkES/60bl+t3+nQwc`,
          `server ${exServer.id} running ${exIp.ipv4} charged 4.50000 USD`,
          `volume ${exVolume.id} attached on ${exServer.id} at /mnt/app-data`,
          `server deleted, detached ${exVolume.id}`,
          'volume deleted',
          'wallet capture 1.00000 USD',
          'wallet hold 1.00000 USD',
          'wallet capture 4.50000 USD',
          'wallet hold 4.50000 USD',
          'wallet credit 25.00000 USD',
        ]);
        expect(seen.filter((r) => r.headers.authorization === `Bearer ${apiToken('ex', 'rw')}`).every((r) => r.headers['user-agent'] === `cloud-disk-sdk-js/1.0.0 node/${process.version} first-server-example/1`)).toBe(true);
        console.log(`npm pack test, ms per step: ${JSON.stringify(timings)}`);
      } finally {
        dir.remove();
      }
    }, scaled(180_000));
  });

});
