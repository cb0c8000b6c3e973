import { scaled } from '../support/deadlines';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TestDatabase, createTestDatabase, usingPostgres } from '../support/database';
import { OWNER_PASSWORD, apiToken, region } from '../support/fixtures';
import { teamOrg } from '../support/accounts';
import { Answer, SHARED_IDEMPOTENCY_SECRET, callProcess } from '../support/process-http';
import { ServerProcess, pausableWorker, runCli, startServerProcess, tempDir } from '../support/processes';

/**
 * A black-box contract suite written from lifecycle.md, the disk sections ("Volume, extended",
 * "Region capacity", "Buying", "Quotes", "Attach, detach, delete, edit", "The storage provider",
 * "Operations: long-poll and ETag"), against two server processes (node dist/src/main.js, A and B)
 * sharing one PostgreSQL database. Only HTTP and the operator CLI (seed, verify): no SQL, no
 * application internals. Each test title is the sentence of lifecycle.md it checks; each request
 * alternates the processes, so what one process writes the other must see; every response is
 * validated against the OpenAPI document its process serves.
 *
 * A and B run no worker, so an accepted operation stays `pending` until the test lets a worker
 * process (W, WORKER_ENABLED=true) run it: the states in between are observed without racing a
 * worker. W is started once and stopped (SIGSTOP, holding no lock: pausableWorker) between those
 * moments; a worker with other settings (its provider down) is started for its moment. Two more processes appear where lifecycle.md needs them: one
 * whose storage provider is down (PROVIDER_DOWN=true, for the 503s and GET /v1/ready), and one
 * whose clock runs 11 minutes ahead (a quote older than 10 minutes, seen from outside).
 */
const describeOnPostgres = usingPostgres() ? describe : describe.skip;
if (!usingPostgres()) {
  console.log('lifecycle-processes.e2e-spec: skipped, needs DATABASE_URL (PostgreSQL); two processes cannot share the embedded engine');
}

const KEY = apiToken('k', 'rw');
const RO_KEY = apiToken('k', 'ro');
const POOR_KEY = apiToken('p', 'rw');
const OTHER_KEY = apiToken('m', 'rw');
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const VOL_ID = /^vol_[A-Za-z0-9]{20,}$/;
const OP_ID = /^op_[A-Za-z0-9]{20,}$/;
const QUO_ID = /^quo_[A-Za-z0-9]{20,}$/;
const AUD_ID = /^aud_[A-Za-z0-9]{20,}$/;

/** The operation a 202 answers: pending, its steps as given, no result yet (created now, or at `createdAt`). */
const pendingOperation = (type: string, volumeId: string, vmId: string | null, steps: { name: string; status: string }[], createdAt: unknown = expect.stringMatching(ISO)) => ({
  id: expect.stringMatching(OP_ID), type, status: 'pending', vm_id: vmId, volume_id: volumeId, steps, result: null, error: null, created_at: createdAt, finished_at: null,
});

/** `iso` plus `months` calendar months in UTC, the day clamped to the month's last (Jan 31 + 1 = Feb 28). */
function addMonths(iso: string, months: number): string {
  const d = new Date(iso);
  const month = d.getUTCMonth() + months;
  const last = new Date(Date.UTC(d.getUTCFullYear(), month + 1, 0)).getUTCDate();
  return new Date(
    Date.UTC(d.getUTCFullYear(), month, Math.min(d.getUTCDate(), last), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds()),
  ).toISOString();
}

/** A USD amount (five decimals) as minor units, and back: the test's own arithmetic on the wallet's strings. */
const usd = (amount: string): bigint => BigInt(amount.replace('.', ''));
const fmtUsd = (minor: bigint): string => `${minor / 100000n}.${(minor % 100000n).toString().padStart(5, '0')}`;

/** A Node preload that moves this process's clock `ms` ahead (Date and Date.now), as libfaketime would. */
const CLOCK_AHEAD = `const RealDate = Date;
const offset = Number(process.env.CLOCK_AHEAD_MS);
class ShiftedDate extends RealDate {
  constructor(...args) { if (args.length === 0) super(RealDate.now() + offset); else super(...args); }
  static now() { return RealDate.now() + offset; }
}
globalThis.Date = ShiftedDate;
`;

describeOnPostgres('lifecycle.md, disks: a contract suite against two server processes (PostgreSQL)', () => {
  let db: TestDatabase;
  let dir: ReturnType<typeof tempDir>;
  let a: ServerProcess;
  let b: ServerProcess;
  let env: Record<string, string | undefined>;
  const extra: ServerProcess[] = [];
  const tok: Record<string, string> = {};
  /** Every Idempotency-Key sent: none may appear in a log line. */
  const keys: string[] = [];

  const call = (
    p: ServerProcess,
    method: string,
    path: string,
    opts: { token?: string; body?: unknown; rawBody?: string; idem?: string; headers?: Record<string, string> } = {},
  ): Promise<Answer> => {
    if (opts.idem) keys.push(opts.idem);
    return callProcess(p, method, path, { ...opts, token: opts.token ?? KEY, idempotencyKey: opts.idem });
  };
  /** The whole error envelope of `r`, its request_id the X-Request-Id header. */
  const expectError = (r: Answer, status: number, code: string, message: string | RegExp, details: Record<string, unknown> = {}) => {
    expect({ status: r.status, body: r.body }).toEqual({
      status,
      body: { error: { code, message: typeof message === 'string' ? message : expect.stringMatching(message), request_id: r.headers.get('x-request-id'), details } },
    });
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  };
  /** What an accepted action answers: 202, JSON, Location naming its operation. */
  const expectAccepted = (r: Answer) => {
    expect(r.status).toBe(202);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(r.headers.get('location')).toBe(`/v1/operations/${r.body.operation.id}`);
    expect(Object.keys(r.body).sort()).toEqual(['operation', 'volume']);
  };

  const wallet = async (p: ServerProcess, token = KEY) => {
    const r = await call(p, 'GET', '/v1/wallet', { token });
    expect(r.status).toBe(200);
    return Object.fromEntries(r.body.balances.map((x: { currency: string; available: string; reserved: string }) => [x.currency, { available: x.available, reserved: x.reserved }]));
  };
  const options = async (p: ServerProcess, regionId: string, type = 'premium') => {
    const r = await call(p, 'GET', `/v1/volume-options?region=${regionId}&type=${type}`);
    expect(r.status).toBe(200);
    return r.body;
  };
  const volume = async (p: ServerProcess, id: string, token = KEY) => {
    const r = await call(p, 'GET', `/v1/volumes/${id}`, { token });
    expect(r.status).toBe(200);
    return r.body;
  };
  const operation = async (p: ServerProcess, id: string) => {
    const r = await call(p, 'GET', `/v1/operations/${id}`);
    expect(r.status).toBe(200);
    return r.body;
  };
  const listed = async (p: ServerProcess, query: string) => {
    const r = await call(p, 'GET', `/v1/volumes?limit=100&${query}`);
    expect(r.status).toBe(200);
    return r.body.volumes as { id: string; name: string; status: string }[];
  };
  /** The audit entries of a target, newest first (an owner's session: the log is for sessions of admins and owners). */
  const audit = async (p: ServerProcess, targetId: string) => {
    const r = await call(p, 'GET', `/v1/audit-log?target_id=${targetId}&limit=100`, { token: tok.owner });
    expect(r.status).toBe(200);
    return r.body.entries;
  };

  /** W, paused between settles (its exit code, 0, is checked in afterAll). */
  let worker: ReturnType<typeof pausableWorker>;
  /**
   * Lets a worker process on the shared database end every operation given: W, continued and paused
   * again after; with `workerEnv`, a process of those settings, started and stopped (SIGTERM, exit 0).
   */
  const settle = async (ids: string[], workerEnv: Record<string, string> = {}, token = KEY) => {
    const own = Object.keys(workerEnv).length > 0;
    const w = own ? await startServerProcess({ ...env, WORKER_ENABLED: 'true', WORKER_INTERVAL_MS: '50', ...workerEnv }) : await worker.run();
    try {
      for (const [i, id] of ids.entries()) {
        let op: { status: string } | undefined;
        for (let tries = 0; tries < 10 && !(op && ['succeeded', 'failed'].includes(op.status)); tries++) {
          op = (await call(i % 2 ? a : b, 'GET', `/v1/operations/${id}?wait=30`, { token })).body;
        }
        expect([id, op?.status]).toEqual([id, expect.stringMatching(/^(succeeded|failed)$/)]);
      }
    } finally {
      if (own) expect(await w.stop()).toBe(0);
      else await worker.pause();
    }
  };
  const purchase = async (p: ServerProcess, body: Record<string, unknown>, opts: { token?: string; idem?: string } = {}) =>
    call(p, 'POST', '/v1/volumes', { body: { region: 'id-jkt', size_gb: 10, term_months: 1, currency: 'USD', ...body }, ...opts });
  /** A detached volume of 10 GB in id-jkt-a, bought and made ready. */
  const readyVolume = async (name: string, extraBody: Record<string, unknown> = {}) => {
    const r = await purchase(a, { name, ...extraBody });
    expectAccepted(r);
    await settle([r.body.operation.id]);
    return volume(b, r.body.volume.id);
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    dir = tempDir('cds-lifecycle-');
    const seed = join(dir.path, 'seed.json');
    const k = teamOrg('k');
    const m = teamOrg('m');
    writeFileSync(
      seed,
      JSON.stringify({
        regions: [
          region('id-jkt'),
          {
            // 100 GB in all, sold 50 GB at a time: two disks fill it. Its first zone is closed, so a
            // disk bought without zone or server goes to sg-sin-b. No ssd, no 3-month term.
            id: 'sg-sin',
            name: 'Singapore',
            capacity_gb: 100,
            zones: [
              { id: 'sg-sin-a', available: false },
              { id: 'sg-sin-b', available: true },
            ],
            volume_offers: [
              { type: 'premium', min_gb: 50, max_gb: 100, step_gb: 50, terms: [1, 12], per_server_limit: 2, price_per_gb_month: { USD: '0.03000', IDR: '500' } },
            ],
          },
        ],
        organizations: [
          {
            ...k,
            wallet: { USD: '1000.00000', IDR: '1500000' },
            api_keys: [...k.api_keys, { name: 'reader', scopes: ['vm:read'], token: RO_KEY }],
            servers: [
              ...k.servers,
              { id: 'vm_kweb2', name: 'web-2', region: 'id-jkt', zone: 'id-jkt-a' },
              { id: 'vm_kb1', name: 'b-1', region: 'id-jkt', zone: 'id-jkt-b' },
              { id: 'vm_ksgb', name: 'sg-b', region: 'sg-sin', zone: 'sg-sin-b' },
            ],
          },
          { ...teamOrg('p'), wallet: { USD: '0.10000', IDR: '0' } },
          m,
        ],
      }),
    );
    env = { DATABASE_URL: db.url, DEMO_SEED: 'false', IDEMPOTENCY_SECRET: SHARED_IDEMPOTENCY_SECRET, RATE_LIMIT_PER_MINUTE: '100000', DB_POOL_SIZE: '4' };
    const seeded = runCli(['seed', seed], env);
    expect(seeded.stderr).toBe('');
    expect(seeded.status).toBe(0);
    worker = pausableWorker({ ...env, WORKER_INTERVAL_MS: '50' });
    [a, b] = await Promise.all([startServerProcess({ ...env, WORKER_ENABLED: 'false' }), startServerProcess({ ...env, WORKER_ENABLED: 'false' }), worker.run()]);
    await worker.pause();
    for (const role of ['owner', 'admin', 'dev', 'viewer']) {
      const r = await call(role.length % 2 ? a : b, 'POST', '/v1/auth/login', { body: { email: `${role}@k.test`, password: OWNER_PASSWORD } });
      expect(r.status).toBe(200);
      tok[role] = r.body.token;
    }
  }, scaled(120_000));
  afterAll(async () => {
    for (const p of extra) await p.stop('SIGKILL');
    if (worker) expect(await worker.stop()).toBe(0);
    await a?.stop();
    await b?.stop();
    for (const out of [a?.output() ?? '', b?.output() ?? '']) {
      expect(out).toContain('request completed');
      // Never a token, a password or an Idempotency-Key in a log line, on either process.
      for (const s of [OWNER_PASSWORD, KEY.slice(13), POOR_KEY.slice(13), OTHER_KEY.slice(13), ...Object.values(tok).map((x) => x.slice(13)), ...keys]) {
        expect(out).not.toContain(s);
      }
    }
    await db?.drop();
    dir?.remove();
  });


  describe('Volume, extended', () => {
    it('New members on every Volume object: labels ({} when none) and delete_protection (false by default); existing members are unchanged', async () => {
      const seeded = await volume(a, 'vol_kdata1');
      expect(seeded).toEqual({
        id: 'vol_kdata1', name: 'data-1', status: 'attached', type: 'premium', region: 'id-jkt', zone: 'id-jkt-a', size_gb: 100,
        server: { id: 'vm_kweb1', name: 'web-1' }, mount_path: '/mnt/data', mounted: true, term_months: 1,
        billing: { currency: 'USD', amount: '2.00000' }, price_per_gb_month: { USD: '0.02000', IDR: '320' }, expires_at: '2026-12-21T00:00:00.000Z',
        note: null, labels: {}, delete_protection: false, created_at: expect.stringMatching(ISO), deleted_at: null, deleted_reason: null, suspended_at: null, release_at: null, auto_renew: { enabled: false, term_months: null, last_attempt: null, next_attempt_at: null }, previous_server_id: null,
      });
      const list = await call(b, 'GET', '/v1/volumes?name=data-1');
      expect(list.body).toEqual({ volumes: [seeded], next_cursor: null });
    });

    it('Names: 1–64 characters of letters, digits, ., _, -, starting with a letter or digit', async () => {
      const v = await readyVolume('names-1');
      for (const name of ['a', 'A.b_c-9', `x${'y'.repeat(63)}`, '9lives']) {
        const r = await call(b, 'PATCH', `/v1/volumes/${v.id}`, { body: { name } });
        expect([name, r.status, r.body.name]).toEqual([name, 200, name]);
      }
      const rule = 'name must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit';
      for (const name of ['', `x${'y'.repeat(64)}`, '-lead', '.lead', '_lead', 'has space', 'slash/no', 'ünï']) {
        expectError(await call(a, 'PATCH', `/v1/volumes/${v.id}`, { body: { name } }), 400, 'invalid_request', rule, { field: 'name' });
        expectError(await purchase(b, { name }), 400, 'invalid_request', rule, { field: 'name' });
      }
      expect((await volume(a, v.id)).name).toBe('9lives');
    });

    it('unique among the organization\'s volumes that are not deleted (409 conflict)', async () => {
      const v = await readyVolume('unique-1');
      // Taken in this organization: 409 conflict, for a purchase and for a rename.
      const taken = 'The organization already has a volume named unique-1; names are unique among volumes not deleted';
      expectError(await purchase(b, { name: 'unique-1' }), 409, 'conflict', taken, { field: 'name' });
      expectError(await call(a, 'PATCH', '/v1/volumes/vol_kdata1', { body: { name: 'unique-1' } }), 409, 'conflict', taken, { field: 'name' });
      // Another organization's names never count (org m has a data-1 of its own, and now a unique-1).
      const theirs = await purchase(a, { name: 'unique-1' }, { token: OTHER_KEY });
      expectAccepted(theirs);
      await settle([theirs.body.operation.id], {}, OTHER_KEY);
      // A deleted volume's name is free again.
      const del = await call(b, 'DELETE', `/v1/volumes/${v.id}`);
      expectAccepted(del);
      await settle([del.body.operation.id]);
      expect((await volume(a, v.id)).status).toBe('deleted');
      const again = await purchase(a, { name: 'unique-1' });
      expectAccepted(again);
      expect(again.body.volume.name).toBe('unique-1');
      await settle([again.body.operation.id]);
    });

    it('Labels: at most 32; keys 1–63 characters of [a-z0-9._/-], values 0–255 characters, no NUL', async () => {
      const v = await readyVolume('labels-1');
      const max = Object.fromEntries(Array.from({ length: 32 }, (_, i) => [`k${i}`, i % 2 ? '' : 'v'.repeat(255)]));
      const ok = await call(a, 'PATCH', `/v1/volumes/${v.id}`, { body: { labels: max } });
      expect(ok.status).toBe(200);
      expect(ok.body.labels).toEqual(max);
      const edge = await call(b, 'PATCH', `/v1/volumes/${v.id}`, { body: { labels: { [`a${'b'.repeat(62)}`]: 'x', 'x.y_z/w-0': '' } } });
      expect([edge.status, edge.body.labels]).toEqual([200, { [`a${'b'.repeat(62)}`]: 'x', 'x.y_z/w-0': '' }]);
      const keyRule = (key: string) => `labels: key ${JSON.stringify(key)} must be 1 to 63 of a-z, 0-9, ".", "_", "/", "-"`;
      const cases: [Record<string, unknown>, string, string][] = [
        [{ ...max, k32: 'x' }, 'labels may hold at most 32 labels, got 33', 'labels'],
        [{ '': 'x' }, keyRule(''), 'labels.'],
        [{ [`a${'b'.repeat(63)}`]: 'x' }, keyRule(`a${'b'.repeat(63)}`), `labels.a${'b'.repeat(63)}`],
        [{ Env: 'x' }, keyRule('Env'), 'labels.Env'],
        [{ 'a b': 'x' }, keyRule('a b'), 'labels.a b'],
        [{ env: 'v'.repeat(256) }, 'labels.env must be at most 255 characters', 'labels.env'],
        [{ env: 'a\u0000b' }, 'labels.env must not contain NUL (\\u0000) characters', 'labels.env'],
        [{ env: 5 }, 'labels.env must be a string', 'labels.env'],
      ];
      for (const [labels, message, field] of cases) {
        expectError(await call(a, 'PATCH', `/v1/volumes/${v.id}`, { body: { labels } }), 400, 'invalid_request', message, { field });
        expectError(await purchase(b, { name: 'labels-2', labels }), 400, 'invalid_request', message, { field });
      }
      expect((await volume(b, v.id)).labels).toEqual(edge.body.labels);
      expect(await listed(a, 'name=labels-2&status=creating')).toEqual([]);
    });

    it('An attach or detach in progress does not change the status: the operation says so, and one unfinished operation per volume stays the rule (409 invalid_state for a second one, details.operation_id naming the one in the way)', async () => {
      const v = await readyVolume('busy-1');
      const attach = await call(a, 'POST', `/v1/volumes/${v.id}/attach`, { body: { server_id: 'vm_kweb2' } });
      expectAccepted(attach);
      const opId = attach.body.operation.id;
      expect(attach.body.volume.status).toBe('available');
      expect(await volume(b, v.id)).toEqual({ ...v, status: 'available' });
      expect((await operation(b, opId)).status).toBe('pending');
      const inTheWay = `Volume ${v.id} already has an operation pending or running (${opId}); wait for it to end`;
      expectError(await call(b, 'POST', `/v1/volumes/${v.id}/attach`, { body: { server_id: 'vm_kweb2' } }), 409, 'invalid_state', inTheWay, { operation_id: opId });
      expectError(await call(a, 'POST', `/v1/volumes/${v.id}/detach`), 409, 'invalid_state', inTheWay, { operation_id: opId });
      expectError(await call(b, 'DELETE', `/v1/volumes/${v.id}`), 409, 'invalid_state', inTheWay, { operation_id: opId });
      expectError(await call(a, 'POST', `/v1/volumes/${v.id}/renew`, { body: { term_months: 1 } }), 409, 'invalid_state', inTheWay, { operation_id: opId });
      await settle([opId]);
      const detach = await call(b, 'POST', `/v1/volumes/${v.id}/detach`);
      expectAccepted(detach);
      expect(detach.body.volume.status).toBe('attached');
      expect((await volume(a, v.id)).status).toBe('attached');
      const detachInTheWay = `Volume ${v.id} already has an operation pending or running (${detach.body.operation.id}); wait for it to end`;
      expectError(await call(a, 'DELETE', `/v1/volumes/${v.id}?detach=true`), 409, 'invalid_state', detachInTheWay, { operation_id: detach.body.operation.id });
      await settle([detach.body.operation.id]);
      expect((await volume(a, v.id)).status).toBe('available');
    });

    it('Statuses: creating (bought, not yet ready): a disk still being bought names its purchase as the operation in the way', async () => {
      const r = await purchase(a, { name: 'creating-1' });
      expectAccepted(r);
      const { volume: v, operation: op } = r.body;
      expect((await volume(b, v.id)).status).toBe('creating');
      const inTheWay = `Volume ${v.id} already has an operation pending or running (${op.id}); wait for it to end`;
      expectError(await call(b, 'POST', `/v1/volumes/${v.id}/attach`, { body: { server_id: 'vm_kweb2' } }), 409, 'invalid_state', inTheWay, { operation_id: op.id });
      expectError(await call(a, 'DELETE', `/v1/volumes/${v.id}`), 409, 'invalid_state', inTheWay, { operation_id: op.id });
      await settle([op.id]);
    });
  });

  describe('Buying: POST /v1/volumes (vm:write; developer, admin, owner)', () => {
    it('Accepted: 202 {volume, operation} with Location. In one transaction: the volume row (status creating, expires_at = acceptance time + term), the hold, the operation volume.create (vm_id null; payment_reserved succeeded, creating_volume, ready pending), the audit row', async () => {
      const before = await wallet(b);
      const t0 = new Date().toISOString();
      const r = await purchase(a, { name: 'bought-1', size_gb: 100, term_months: 12, labels: { env: 'prod' }, note: 'orders' });
      const t1 = new Date().toISOString();
      expectAccepted(r);
      const { volume: v, operation: op } = r.body;
      expect(v.created_at >= t0 && v.created_at <= t1).toBe(true);
      expect(r.body).toEqual({
        volume: {
          id: expect.stringMatching(VOL_ID), name: 'bought-1', status: 'creating', type: 'premium', region: 'id-jkt', zone: 'id-jkt-a', size_gb: 100,
          server: null, mount_path: null, mounted: false, term_months: 12, billing: { currency: 'USD', amount: '24.00000' },
          price_per_gb_month: { USD: '0.02000', IDR: '320' }, expires_at: addMonths(v.created_at, 12), note: 'orders', labels: { env: 'prod' },
          delete_protection: false, created_at: expect.stringMatching(ISO), deleted_at: null, deleted_reason: null, suspended_at: null, release_at: null, auto_renew: { enabled: false, term_months: null, last_attempt: null, next_attempt_at: null }, previous_server_id: null,
        },
        operation: pendingOperation('volume.create', v.id, null, [{ name: 'payment_reserved', status: 'succeeded' }, { name: 'creating_volume', status: 'pending' }, { name: 'ready', status: 'pending' }], v.created_at),
      });
      // The other process sees the same volume and operation, and the hold.
      expect(await volume(b, v.id)).toEqual(v);
      expect(await operation(b, op.id)).toEqual(op);
      expect(await wallet(b)).toEqual({ ...before, USD: { available: fmtUsd(usd(before.USD.available) - 2400000n), reserved: fmtUsd(usd(before.USD.reserved) + 2400000n) } });
      const [entry] = await audit(b, v.id);
      expect(entry).toEqual({
        id: expect.stringMatching(AUD_ID), created_at: expect.stringMatching(ISO), action: 'volume.create',
        actor: { type: 'api_key', id: expect.stringMatching(/^key_/), name: 'ci' }, target: { type: 'volume', id: v.id }, ip: '127.0.0.1',
        request_id: r.headers.get('x-request-id'), client_request_id: null,
        data: {
          operation_id: op.id, name: 'bought-1', region: 'id-jkt', zone: 'id-jkt-a', type: 'premium', size_gb: 100, term_months: 12,
          currency: 'USD', amount: '24.00000', server_id: null, mount_path: null, quote_id: null,
        },
      });

      // Success: available, expires_at = the success time + term_months, term_months and billing of the purchase, the hold captured, the result.
      await settle([op.id]);
      const done = await operation(a, op.id);
      const after = await volume(b, v.id);
      expect(done).toEqual({
        ...op, status: 'succeeded',
        steps: [{ name: 'payment_reserved', status: 'succeeded' }, { name: 'creating_volume', status: 'succeeded' }, { name: 'ready', status: 'succeeded' }],
        result: { volume_id: v.id, size_gb: 100, expires_at: after.expires_at, charged: { currency: 'USD', amount: '24.00000' } },
        finished_at: expect.stringMatching(ISO),
      });
      expect(after).toEqual({ ...v, status: 'available', expires_at: expect.stringMatching(ISO) });
      // Recomputed at success: after the acceptance-time expiry, at most the finish time + 12 months.
      expect(after.expires_at > v.expires_at).toBe(true);
      expect(after.expires_at <= addMonths(done.finished_at, 12)).toBe(true);
      expect(await wallet(a)).toEqual({ ...before, USD: { available: fmtUsd(usd(before.USD.available) - 2400000n), reserved: before.USD.reserved } });
    });

    it('with server_id (attach when ready): vm_id = server_id, steps payment_reserved, creating_volume, attaching, ready; mount_path defaults to /mnt/<name>; success: attached, mounted: true, with server and mount_path; in IDR', async () => {
      const before = await wallet(a);
      const r = await purchase(b, { name: 'served-1', server_id: 'vm_kweb2', currency: 'IDR', term_months: 3 });
      expectAccepted(r);
      const { volume: v, operation: op } = r.body;
      expect(r.body).toEqual({
        volume: {
          id: expect.stringMatching(VOL_ID), name: 'served-1', status: 'creating', type: 'premium', region: 'id-jkt', zone: 'id-jkt-a', size_gb: 10,
          server: null, mount_path: null, mounted: false, term_months: 3, billing: { currency: 'IDR', amount: '9600' },
          price_per_gb_month: { USD: '0.02000', IDR: '320' }, expires_at: addMonths(v.created_at, 3), note: null, labels: {},
          delete_protection: false, created_at: expect.stringMatching(ISO), deleted_at: null, deleted_reason: null, suspended_at: null, release_at: null, auto_renew: { enabled: false, term_months: null, last_attempt: null, next_attempt_at: null }, previous_server_id: null,
        },
        operation: pendingOperation('volume.create', v.id, 'vm_kweb2', [{ name: 'payment_reserved', status: 'succeeded' }, { name: 'creating_volume', status: 'pending' }, { name: 'attaching', status: 'pending' }, { name: 'ready', status: 'pending' }], v.created_at),
      });
      expect(await wallet(a)).toEqual({ ...before, IDR: { available: String(BigInt(before.IDR.available) - 9600n), reserved: String(BigInt(before.IDR.reserved) + 9600n) } });
      expect((await audit(a, v.id))[0].data).toMatchObject({ server_id: 'vm_kweb2', mount_path: '/mnt/served-1', currency: 'IDR', amount: '9600' });
      await settle([op.id]);
      const after = await volume(a, v.id);
      expect(after).toEqual({ ...v, status: 'attached', server: { id: 'vm_kweb2', name: 'web-2' }, mount_path: '/mnt/served-1', mounted: true, expires_at: expect.stringMatching(ISO) });
      expect(await operation(b, op.id)).toMatchObject({
        status: 'succeeded', error: null,
        steps: ['payment_reserved', 'creating_volume', 'attaching', 'ready'].map((name) => ({ name, status: 'succeeded' })),
        result: { volume_id: v.id, size_gb: 10, expires_at: after.expires_at, charged: { currency: 'IDR', amount: '9600' } },
      });
      expect(await wallet(b)).toEqual({ ...before, IDR: { available: String(BigInt(before.IDR.available) - 9600n), reserved: before.IDR.reserved } });
      expect(await listed(b, 'server_id=vm_kweb2&name=served-1')).toEqual([after]);
    });

    it('Price: size_gb × price_per_gb_month[currency] × term_months, exact, with the offer\'s price at acceptance, frozen on the volume as its price_per_gb_month; type premium by default, ssd on request', async () => {
      const ssd = await purchase(a, { name: 'price-ssd', type: 'ssd', size_gb: 330, term_months: 12 });
      expectAccepted(ssd);
      // 330 × 0.01250 × 12 = 49.50000 USD.
      expect(ssd.body.volume).toMatchObject({ type: 'ssd', size_gb: 330, billing: { currency: 'USD', amount: '49.50000' }, price_per_gb_month: { USD: '0.01250', IDR: '200' } });
      // 250 × 320 × 1 = 80000 IDR.
      const idr = await purchase(b, { name: 'price-idr', size_gb: 250, currency: 'IDR' });
      expectAccepted(idr);
      expect(idr.body.volume).toMatchObject({ type: 'premium', billing: { currency: 'IDR', amount: '80000' }, price_per_gb_month: { USD: '0.02000', IDR: '320' } });
      await settle([ssd.body.operation.id, idr.body.operation.id]);
      expect((await operation(a, idr.body.operation.id)).result.charged).toEqual({ currency: 'IDR', amount: '80000' });
    });
  });

  describe('Buying: every documented error, its whole envelope, nothing reserved', () => {
    /** What a refused purchase must leave: the wallet as it was, no volume of that name. */
    const expectNothingReserved = async (before: Record<string, unknown>, name: string, token = KEY) => {
      expect(await wallet(b, token)).toEqual(before);
      const r = await call(a, 'GET', `/v1/volumes?name=${name}&status=creating`, { token });
      expect(r.body.volumes).toEqual([]);
    };
    const base = { name: 'refused', region: 'id-jkt', size_gb: 10, term_months: 1, currency: 'USD' };

    it('400: a member missing or of the wrong type; type other than premium or ssd', async () => {
      const before = await wallet(a);
      const missing: Record<string, string> = {
        name: 'name is required', region: 'region is required', size_gb: 'size_gb is required',
        term_months: 'term_months is required: 1, 3 or 12', currency: 'currency is required: USD or IDR',
      };
      for (const [member, message] of Object.entries(missing)) {
        const body: Record<string, unknown> = { ...base };
        delete body[member];
        expectError(await call(a, 'POST', '/v1/volumes', { body }), 400, 'invalid_request', message, { field: member });
      }
      const wrong: [string, unknown, string][] = [
        ['name', 5, 'name must be a string: 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit'],
        ['region', 5, 'region must be a string'],
        ['size_gb', '10', 'size_gb must be a whole number of GB'],
        ['size_gb', 10.5, 'size_gb must be a whole number of GB'],
        ['term_months', '1', 'term_months must be an integer: 1, 3 or 12'],
        ['term_months', 2, 'term_months must be 1, 3 or 12'],
        ['currency', 'EUR', 'currency must be USD or IDR'],
        ['type', 'hdd', 'type must be premium or ssd'],
        ['type', 5, 'type must be a string: premium or ssd'],
        ['zone', 5, 'zone must be a string'],
        ['server_id', 5, 'server_id must be a string'],
        ['note', 5, 'note must be a string or null'],
        ['labels', [], 'labels must be an object of string values'],
        ['delete_protection', 'yes', 'delete_protection must be true or false'],
        ['quote_id', 5, 'quote_id must be a string'],
      ];
      for (const [member, value, message] of wrong) {
        expectError(await call(b, 'POST', '/v1/volumes', { body: { ...base, [member]: value } }), 400, 'invalid_request', message, { field: member });
      }
      expectError(await call(a, 'POST', '/v1/volumes', { rawBody: '{"name": ' }), 400, 'invalid_request', 'Request body is not valid JSON', { field: 'body' });
      await expectNothingReserved(before, 'refused');
    });

    it('400: size_gb outside min_gb..max_gb or not min_gb + k × step_gb; a term the offer does not sell', async () => {
      const before = await wallet(b);
      for (const size of [0, 5, 15, 4010]) {
        expectError(
          await purchase(a, { name: 'refused', size_gb: size }), 400, 'invalid_request',
          `size_gb must be from 10 to 4000 in steps of 10 (10, 20, ...) for premium in id-jkt; got ${size}`, { field: 'size_gb' },
        );
      }
      expectError(
        await purchase(b, { name: 'refused', region: 'sg-sin', size_gb: 75 }), 400, 'invalid_request',
        'size_gb must be from 50 to 100 in steps of 50 (50, 100, ...) for premium in sg-sin; got 75', { field: 'size_gb' },
      );
      expectError(
        await purchase(a, { name: 'refused', region: 'sg-sin', size_gb: 50, term_months: 3 }), 400, 'invalid_request',
        'term_months must be one of the terms sold for premium in sg-sin: 1, 12', { field: 'term_months' },
      );
      await expectNothingReserved(before, 'refused');
    });

    it('400: zone naming a zone of another region; a server in another region or zone than the disk; mount_path not absolute', async () => {
      const before = await wallet(a);
      expectError(await purchase(a, { name: 'refused', zone: 'sg-sin-b' }), 400, 'invalid_request', 'zone sg-sin-b is in region sg-sin, not in id-jkt', { field: 'zone' });
      expectError(await purchase(b, { name: 'refused', server_id: 'vm_ksgb' }), 400, 'invalid_request', 'server vm_ksgb is in region sg-sin; the disk is bought in id-jkt', { field: 'server_id' });
      expectError(
        await purchase(a, { name: 'refused', zone: 'id-jkt-a', server_id: 'vm_kb1' }), 400, 'invalid_request',
        'server vm_kb1 is in zone id-jkt-b; the disk is bought in id-jkt-a', { field: 'server_id' },
      );
      for (const path of ['mnt/x', '', '/a/../b', '/a/./b', `/${'x'.repeat(255)}`]) {
        expectError(
          await purchase(b, { name: 'refused', server_id: 'vm_kweb2', mount_path: path }), 400, 'invalid_request',
          `mount_path must be an absolute path: "/" followed by at most 254 characters, no NUL, no "." or ".." segment; got ${JSON.stringify(path.slice(0, 80))}`,
          { field: 'mount_path' },
        );
      }
      // mount_path (optional, only with server_id).
      expectError(await purchase(a, { name: 'refused', mount_path: '/mnt/x' }), 400, 'invalid_request', 'mount_path is only allowed with server_id (the disk is mounted when it is attached)', { field: 'mount_path' });
      await expectNothingReserved(before, 'refused');
    });

    it('400 for a region or zone that does not exist (details.valid); 404: a server that does not exist (servers of other organizations count as not existing); a region that sells no disk of that type', async () => {
      const before = await wallet(b);
      expectError(await purchase(a, { name: 'refused', region: 'xx-nowhere' }), 400, 'invalid_request', /^region xx-nowhere is no region; valid: .*id-jkt/, { field: 'region', valid: expect.arrayContaining(['id-jkt', 'sg-sin']) });
      expectError(await purchase(b, { name: 'refused', zone: 'id-jkt-z' }), 400, 'invalid_request', /^zone id-jkt-z is no zone of region id-jkt; valid: id-jkt-a/, { field: 'zone', valid: expect.arrayContaining(['id-jkt-a']) });
      expectError(await purchase(a, { name: 'refused', server_id: 'vm_nope' }), 404, 'not_found', 'Server vm_nope not found');
      expectError(await purchase(b, { name: 'refused', server_id: 'vm_mweb1' }), 404, 'not_found', 'Server vm_mweb1 not found');
      expectError(await purchase(a, { name: 'refused', region: 'sg-sin', type: 'ssd', size_gb: 50 }), 404, 'not_found', 'Region sg-sin sells no ssd disks');
      await expectNothingReserved(before, 'refused');
    });

    it('409 out_of_stock: the zone is not available; 409 conflict: name taken', async () => {
      const before = await wallet(a);
      expectError(await purchase(a, { name: 'refused', zone: 'id-jkt-b' }), 409, 'out_of_stock', 'Zone id-jkt-b does not accept new disks at the moment; choose another zone');
      expectError(await purchase(b, { name: 'refused', server_id: 'vm_kb1' }), 409, 'out_of_stock', 'Zone id-jkt-b does not accept new disks at the moment; choose another zone');
      expectError(await purchase(a, { name: 'data-1' }), 409, 'conflict', 'The organization already has a volume named data-1; names are unique among volumes not deleted', { field: 'name' });
      await expectNothingReserved(before, 'refused');
    });

    it('402 insufficient_balance as for renewals', async () => {
      const before = await wallet(a, POOR_KEY);
      expect(before).toEqual({ USD: { available: '0.10000', reserved: '0.00000' }, IDR: { available: '0', reserved: '0' } });
      expectError(await purchase(b, { name: 'refused' }, { token: POOR_KEY }), 402, 'insufficient_balance', 'The wallet cannot cover 0.20000 USD; available: 0.10000 USD', {
        required: '0.20000', available: '0.10000', currency: 'USD',
      });
      expectError(await purchase(a, { name: 'refused', currency: 'IDR' }, { token: POOR_KEY }), 402, 'insufficient_balance', 'The wallet cannot cover 3200 IDR; available: 0 IDR', {
        required: '3200', available: '0', currency: 'IDR',
      });
      await expectNothingReserved(before, 'refused', POOR_KEY);
    });

    it('vm:write; developer, admin, owner: a viewer session or a read-only key is 403, no token 401', async () => {
      const before = await wallet(a);
      expectError(await purchase(a, { name: 'refused' }, { token: tok.viewer }), 403, 'forbidden', 'Role viewer may not do this; it needs one of: developer, admin, owner');
      expectError(await purchase(b, { name: 'refused' }, { token: RO_KEY }), 403, 'forbidden', 'The API key lacks the scope vm:write');
      expectError(await purchase(a, { name: 'refused' }, { token: 'cds_live_nope' }), 401, 'unauthorized', 'Invalid token');
      const accepted: string[] = [];
      for (const [role, p] of [['dev', a], ['admin', b], ['owner', a]] as const) {
        const r = await purchase(p, { name: `by-${role}` }, { token: tok[role] });
        expectAccepted(r);
        accepted.push(r.body.operation.id);
        const [entry] = await audit(p === a ? b : a, r.body.volume.id);
        expect(entry.actor).toEqual({ type: 'user', id: expect.stringMatching(/^usr_/), email: `${role}@k.test` });
      }
      expect(await wallet(b)).toEqual({ ...before, USD: { available: fmtUsd(usd(before.USD.available) - 60000n), reserved: fmtUsd(usd(before.USD.reserved) + 60000n) } });
      await settle(accepted);
    });

    it('Check order everywhere: 401 → 429 → 403 → 400 → 409 idempotency_conflict → 404 → 409 quote, invalid_state, conflict, out_of_stock, quota_exceeded → 402 → 503', async () => {
      const bad = { ...base, size_gb: 'ten', region: 'xx-nowhere', name: 'data-1' };
      expect((await call(a, 'POST', '/v1/volumes', { token: 'cds_live_nope', body: bad })).status).toBe(401);
      expect((await call(b, 'POST', '/v1/volumes', { token: tok.viewer, body: bad })).body.error.code).toBe('forbidden');
      expect((await call(a, 'POST', '/v1/volumes', { token: RO_KEY, body: bad })).body.error.code).toBe('forbidden');
      // 400 before 404 and 409.
      expect((await call(b, 'POST', '/v1/volumes', { body: bad })).body.error).toMatchObject({ code: 'invalid_request', details: { field: 'size_gb' } });
      expect((await purchase(a, { name: 'refused', size_gb: 15, server_id: 'vm_nope' })).body.error).toMatchObject({ code: 'invalid_request', details: { field: 'size_gb' } });
      expect((await purchase(b, { name: 'refused', zone: 'sg-sin-b', server_id: 'vm_nope' })).body.error).toMatchObject({ code: 'invalid_request', details: { field: 'zone' } });
      expect((await purchase(a, { name: 'refused', zone: 'id-jkt-z', server_id: 'vm_ksgb' })).body.error).toMatchObject({ code: 'invalid_request', details: { field: 'server_id' } });
      const quote = (await call(b, 'POST', '/v1/quotes', { body: { region: 'id-jkt', size_gb: 10, term_months: 1, currency: 'USD' } })).body;
      expect((await purchase(a, { name: 'refused', size_gb: 20, quote_id: quote.id, server_id: 'vm_nope' })).body.error).toMatchObject({ code: 'invalid_request', details: { field: 'size_gb' } });
      // 409 idempotency_conflict before 404: the key was used with another body.
      const first = await purchase(b, { name: 'order-1' }, { idem: 'order-check-1' });
      expectAccepted(first);
      expectError(
        await purchase(a, { name: 'order-1', region: 'xx-nowhere' }, { idem: 'order-check-1' }), 409, 'idempotency_conflict',
        'This Idempotency-Key was already used with a different request; use a new key for a new request',
      );
      // 404 before every 409.
      expect((await purchase(b, { name: 'data-1', zone: 'id-jkt-b', server_id: 'vm_nope' })).body.error.code).toBe('not_found');
      // conflict before out_of_stock (a closed zone); out_of_stock before quota_exceeded is in "Region capacity".
      expect((await purchase(a, { name: 'data-1', zone: 'id-jkt-b' })).body.error.code).toBe('conflict');
      // 409 before 402: the poor organization's own data-1.
      expect((await purchase(b, { name: 'data-1' }, { token: POOR_KEY })).body.error.code).toBe('conflict');
      expect((await purchase(a, { name: 'refused', zone: 'id-jkt-b' }, { token: POOR_KEY })).body.error.code).toBe('out_of_stock');
      await settle([first.body.operation.id]);
    });
  });

  describe('Region capacity is a counter, reserved atomically; per-server slots', () => {
    // sg-sin: 100 GB, premium sold 50 GB at a time, two disks per server; vm_ksgb in sg-sin-b.
    const sg = { region: 'sg-sin', size_gb: 50 };
    const zoneB = (o: { zones: { id: string; servers: unknown[] }[] }) => o.zones.find((z) => z.id === 'sg-sin-b')!.servers;
    const capacity = (gb: number) => {
      const r = runCli(['region:capacity', '--region', 'sg-sin', '--gb', String(gb)], env);
      expect([r.status, r.stderr]).toEqual([0, '']);
    };
    const full = 'Server vm_ksgb already holds 2 data disks (the limit), counting attaches and purchases still in progress';
    const noRoom = 'Region sg-sin has less than 50 GB of disk capacity left';
    let first: Answer;

    it('Free capacity is capacity_gb − used_gb, reserved when a purchase is accepted (GET /v1/volume-options reads the counter); quota_exceeded counts disks attached and purchases with that server still unfinished; out_of_stock comes before quota_exceeded', async () => {
      const start = await options(a, 'sg-sin');
      expect(start).toEqual({
        region: 'sg-sin', type: 'premium', in_stock: true, min_gb: 50, max_gb: 100, step_gb: 50, terms: [1, 12], per_server_limit: 2,
        price_per_gb_month: { USD: '0.03000', IDR: '500' },
        zones: [{ id: 'sg-sin-a', available: false, servers: [] }, { id: 'sg-sin-b', available: true, servers: [{ id: 'vm_ksgb', name: 'sg-b' }] }],
      });
      first = await purchase(a, { ...sg, name: 'sg-1', server_id: 'vm_ksgb' });
      expectAccepted(first);
      // The zone defaults to the server's.
      expect(first.body.volume).toMatchObject({ zone: 'sg-sin-b', billing: { currency: 'USD', amount: '1.50000' } });
      // 50 GB left, and one slot on vm_ksgb (the purchase in flight holds the other).
      expect(await options(b, 'sg-sin')).toEqual(start);
      const second = await purchase(b, { ...sg, name: 'sg-2', server_id: 'vm_ksgb' });
      expectAccepted(second);
      const after = await options(a, 'sg-sin');
      expect(after.in_stock).toBe(false);
      expect(zoneB(after)).toEqual([]);
      expectError(await purchase(b, { ...sg, name: 'sg-3', server_id: 'vm_ksgb' }), 409, 'out_of_stock', noRoom);
      capacity(200);
      expect((await options(a, 'sg-sin')).in_stock).toBe(true);
      expectError(await purchase(b, { ...sg, name: 'sg-3', server_id: 'vm_ksgb' }), 409, 'quota_exceeded', full, { limit: 2, server_id: 'vm_ksgb' });
      await settle([first.body.operation.id, second.body.operation.id]);
      expect((await volume(a, second.body.volume.id)).server).toEqual({ id: 'vm_ksgb', name: 'sg-b' });
      expect(zoneB(await options(b, 'sg-sin'))).toEqual([]);
      expectError(await purchase(a, { ...sg, name: 'sg-3', server_id: 'vm_ksgb' }), 409, 'quota_exceeded', full, { limit: 2, server_id: 'vm_ksgb' });
      capacity(100);
      expect((await options(b, 'sg-sin')).in_stock).toBe(false);
    });

    it('Two purchases racing for the last gigabytes: exactly one gets them, the other 409 out_of_stock; a failed purchase gives them back', async () => {
      capacity(150);
      const before = await wallet(a);
      const race = await Promise.all([purchase(a, { ...sg, name: 'sg-race-a' }), purchase(b, { ...sg, name: 'sg-race-b' })]);
      expect(race.map((r) => r.status).sort()).toEqual([202, 409]);
      const won = race.find((r) => r.status === 202)!;
      expect(won.body.volume.zone).toBe('sg-sin-b');
      expectError(race.find((r) => r.status === 409)!, 409, 'out_of_stock', noRoom);
      expect(await wallet(b)).toEqual({ ...before, USD: { available: fmtUsd(usd(before.USD.available) - 150000n), reserved: fmtUsd(usd(before.USD.reserved) + 150000n) } });
      expect((await options(a, 'sg-sin')).in_stock).toBe(false);
      expectError(await purchase(b, { ...sg, name: 'sg-none' }), 409, 'out_of_stock', noRoom);
      // The provider is down for the whole (test-shortened) retry window: the purchase fails.
      await settle([won.body.operation.id], { PROVIDER_DOWN: 'true', PROVIDER_RETRY_WINDOW_MS: '0' });
      expect((await options(b, 'sg-sin')).in_stock).toBe(true);
      expect(await wallet(a)).toEqual(before);
    });

    it('Failure (any step): the failing step failed, the volume deleted with deleted_at, its capacity given back, the hold released, error: {code, message}', async () => {
      const before = await wallet(a);
      const r = await purchase(b, { ...sg, name: 'sg-fails', term_months: 12 });
      expectAccepted(r);
      expect((await options(a, 'sg-sin')).in_stock).toBe(false);
      expect(await wallet(a)).toEqual({ ...before, USD: { available: fmtUsd(usd(before.USD.available) - 1800000n), reserved: fmtUsd(usd(before.USD.reserved) + 1800000n) } });
      await settle([r.body.operation.id], { PROVIDER_DOWN: 'true', PROVIDER_RETRY_WINDOW_MS: '0' });
      const op = await operation(a, r.body.operation.id);
      expect(op).toEqual({
        ...r.body.operation, status: 'failed',
        steps: [{ name: 'payment_reserved', status: 'succeeded' }, { name: 'creating_volume', status: 'failed' }, { name: 'ready', status: 'pending' }],
        result: null,
        error: { code: 'provider_unavailable', message: 'The storage provider stayed unavailable for 0 minutes: The storage provider is down (PROVIDER_DOWN)' },
        finished_at: expect.stringMatching(ISO),
      });
      const v = await volume(b, r.body.volume.id);
      expect(v).toEqual({ ...r.body.volume, status: 'deleted', deleted_at: expect.stringMatching(ISO), deleted_reason: 'purchase_failed' });
      expect(v.deleted_at >= r.body.volume.created_at).toBe(true);
      expect(await wallet(b)).toEqual(before);
      expect((await options(a, 'sg-sin')).in_stock).toBe(true);
      // Listed with status=deleted only; its name is free again.
      expect((await listed(a, 'name=sg-fails&status=deleted')).map((x) => x.id)).toEqual([v.id]);
      expect(await listed(b, 'name=sg-fails')).toEqual([]);
    });

    it('DELETE success: deleted, deleted_at, capacity given back; the prepaid term is not refunded. Two racing requests cannot both take the last slot', async () => {
      const loose = await purchase(b, { ...sg, name: 'sg-loose' });
      expectAccepted(loose);
      await settle([loose.body.operation.id]);
      // 150 GB of 150 used, vm_ksgb full of attached disks.
      expect((await options(a, 'sg-sin')).in_stock).toBe(false);
      expectError(await call(a, 'POST', `/v1/volumes/${loose.body.volume.id}/attach`, { body: { server_id: 'vm_ksgb' } }), 409, 'quota_exceeded', full, { limit: 2, server_id: 'vm_ksgb' });
      const before = await wallet(b);
      const del = await call(a, 'DELETE', `/v1/volumes/${first.body.volume.id}?detach=true`);
      expectAccepted(del);
      // Counted until the delete succeeds.
      expect((await options(b, 'sg-sin')).in_stock).toBe(false);
      await settle([del.body.operation.id]);
      expect(await volume(b, first.body.volume.id)).toEqual({
        ...first.body.volume, status: 'deleted', deleted_at: expect.stringMatching(ISO), deleted_reason: 'customer', expires_at: expect.stringMatching(ISO),
      });
      const now = await options(a, 'sg-sin');
      expect([now.in_stock, zoneB(now)]).toEqual([true, [{ id: 'vm_ksgb', name: 'sg-b' }]]);
      // Not refunded: the wallet did not move.
      expect(await wallet(a)).toEqual(before);
      // One slot and 50 GB left; a purchase and an attach race for the slot on two processes.
      capacity(200);
      const race = await Promise.all([
        purchase(a, { ...sg, name: 'sg-4', server_id: 'vm_ksgb' }),
        call(b, 'POST', `/v1/volumes/${loose.body.volume.id}/attach`, { body: { server_id: 'vm_ksgb' } }),
      ]);
      expect(race.map((r) => r.status).sort()).toEqual([202, 409]);
      expectError(race.find((r) => r.status === 409)!, 409, 'quota_exceeded', full, { limit: 2, server_id: 'vm_ksgb' });
      await settle(race.filter((r) => r.status === 202).map((r) => r.body.operation.id));
      expect(zoneB(await options(a, 'sg-sin'))).toEqual([]);
    });
  });

  describe('Quotes: POST /v1/quotes (vm:write; developer, admin, owner), GET /v1/quotes/{id} (vm:read; any role)', () => {
    const order = { region: 'id-jkt', type: 'premium', size_gb: 150, term_months: 12, currency: 'USD' };

    it('POST /v1/quotes {region, type, size_gb, term_months, currency} → 201 {id, region, type, size_gb, term_months, currency, price_per_gb_month (both currencies), amount (in currency), created_at, expires_at, used_at}; expires_at = created_at + 10 minutes', async () => {
      const t0 = new Date().toISOString();
      const r = await call(a, 'POST', '/v1/quotes', { body: order });
      expect(r.status).toBe(201);
      expect(r.headers.get('content-type')).toMatch(/^application\/json/);
      expect(r.body).toEqual({
        id: expect.stringMatching(QUO_ID), kind: 'volume', region: 'id-jkt', type: 'premium', size_gb: 150, term_months: 12, currency: 'USD',
        price_per_gb_month: { USD: '0.02000', IDR: '320' }, amount: '36.00000', created_at: expect.stringMatching(ISO),
        expires_at: new Date(Date.parse(r.body.created_at) + 10 * 60_000).toISOString(), used_at: null,
      });
      expect(r.body.created_at >= t0).toBe(true);
      // Any role may read it, on either process; the same object.
      for (const [p, token] of [[b, tok.viewer], [a, RO_KEY], [b, tok.dev], [a, KEY]] as const) {
        const got = await call(p, 'GET', `/v1/quotes/${r.body.id}`, { token });
        expect([got.status, got.body]).toEqual([200, r.body]);
      }
      // In IDR, the type defaulting to premium; an ssd quote.
      const idr = await call(b, 'POST', '/v1/quotes', { body: { region: 'id-jkt', size_gb: 10, term_months: 3, currency: 'IDR' } });
      expect([idr.status, idr.body.type, idr.body.amount]).toEqual([201, 'premium', '9600']);
      const ssd = await call(a, 'POST', '/v1/quotes', { body: { ...order, type: 'ssd', size_gb: 20, term_months: 1 } });
      expect([ssd.status, ssd.body.amount, ssd.body.price_per_gb_month]).toEqual([201, '0.25000', { USD: '0.01250', IDR: '200' }]);
      // Posting needs vm:write (developer, admin, owner).
      expectError(await call(b, 'POST', '/v1/quotes', { body: order, token: tok.viewer }), 403, 'forbidden', 'Role viewer may not do this; it needs one of: developer, admin, owner');
      expectError(await call(a, 'POST', '/v1/quotes', { body: order, token: RO_KEY }), 403, 'forbidden', 'The API key lacks the scope vm:write');
    });

    it('validated as a purchase: 400 (an unknown region too), 404; quotes of another organization are 404', async () => {
      expectError(await call(a, 'POST', '/v1/quotes', { body: { ...order, size_gb: 155 } }), 400, 'invalid_request', 'size_gb must be from 10 to 4000 in steps of 10 (10, 20, ...) for premium in id-jkt; got 155', { field: 'size_gb' });
      expectError(await call(b, 'POST', '/v1/quotes', { body: { ...order, region: 'sg-sin', size_gb: 50, term_months: 3 } }), 400, 'invalid_request', 'term_months must be one of the terms sold for premium in sg-sin: 1, 12', { field: 'term_months' });
      expectError(await call(a, 'POST', '/v1/quotes', { body: { ...order, currency: 'EUR' } }), 400, 'invalid_request', 'currency must be USD or IDR', { field: 'currency' });
      expectError(await call(b, 'POST', '/v1/quotes', { body: { region: 'id-jkt', size_gb: 10, term_months: 1 } }), 400, 'invalid_request', 'currency is required: USD or IDR', { field: 'currency' });
      expectError(await call(a, 'POST', '/v1/quotes', { body: { ...order, region: 'xx-nowhere' } }), 400, 'invalid_request', /^region xx-nowhere is no region; valid: /, { field: 'region', valid: expect.arrayContaining(['id-jkt']) });
      expectError(await call(b, 'POST', '/v1/quotes', { body: { ...order, region: 'sg-sin', type: 'ssd', size_gb: 50 } }), 404, 'not_found', 'Region sg-sin sells no ssd disks');
      const mine = await call(a, 'POST', '/v1/quotes', { body: order });
      expectError(await call(b, 'GET', `/v1/quotes/${mine.body.id}`, { token: OTHER_KEY }), 404, 'not_found', `Quote ${mine.body.id} not found`);
      expectError(await call(a, 'GET', '/v1/quotes/quo_neverexisted00000000000'), 404, 'not_found', 'Quote quo_neverexisted00000000000 not found');
      expectError(await purchase(b, { ...order, name: 'by-stolen-quote', quote_id: mine.body.id }, { token: OTHER_KEY }), 404, 'not_found', `Quote ${mine.body.id} not found`);
    });

    it("A purchase with quote_id: the quote's price applies; the quote is then used (used_at); already used by a purchase 409 invalid_state", async () => {
      const q = (await call(a, 'POST', '/v1/quotes', { body: order })).body;
      const before = await wallet(b);
      const r = await purchase(b, { ...order, name: 'quoted-1', quote_id: q.id });
      expectAccepted(r);
      expect(r.body.volume).toMatchObject({ billing: { currency: 'USD', amount: q.amount }, price_per_gb_month: q.price_per_gb_month, size_gb: 150, term_months: 12 });
      expect(await wallet(a)).toEqual({ ...before, USD: { available: fmtUsd(usd(before.USD.available) - usd(q.amount)), reserved: fmtUsd(usd(before.USD.reserved) + usd(q.amount)) } });
      const used = (await call(a, 'GET', `/v1/quotes/${q.id}`)).body;
      expect(used).toEqual({ ...q, used_at: expect.stringMatching(ISO) });
      expect(used.used_at >= q.created_at).toBe(true);
      expect((await audit(a, r.body.volume.id))[0].data.quote_id).toBe(q.id);
      expectError(
        await purchase(a, { ...order, name: 'quoted-2', quote_id: q.id }), 409, 'invalid_state',
        `Quote ${q.id} was already used by a purchase at ${used.used_at}; request a new one`,
      );
      // The quote's 409 comes before the name's: quote (expired, used), then conflict.
      expect((await purchase(b, { ...order, name: 'quoted-1', quote_id: q.id })).body.error.code).toBe('invalid_state');
      await settle([r.body.operation.id]);
      expect((await operation(a, r.body.operation.id)).result.charged).toEqual({ currency: 'USD', amount: '36.00000' });
    });

    it('a member of the body that differs from the quote is 400 naming it; unknown quote 404', async () => {
      const q = (await call(b, 'POST', '/v1/quotes', { body: order })).body;
      const differs = (field: string, mine: unknown, quoted: unknown) =>
        `${field} (${JSON.stringify(mine)}) differs from quote ${q.id} (${JSON.stringify(quoted)}); send the quote's ${field} or leave out quote_id`;
      const cases: [string, Record<string, unknown>, unknown, unknown][] = [
        ['region', { region: 'sg-sin', size_gb: 100 }, 'sg-sin', 'id-jkt'],
        ['type', { type: 'ssd' }, 'ssd', 'premium'],
        ['size_gb', { size_gb: 160 }, 160, 150],
        ['term_months', { term_months: 1 }, 1, 12],
        ['currency', { currency: 'IDR' }, 'IDR', 'USD'],
      ];
      for (const [field, overrides, mine, quoted] of cases) {
        expectError(await purchase(a, { ...order, name: 'quoted-3', quote_id: q.id, ...overrides }), 400, 'invalid_request', differs(field, mine, quoted), { field });
      }
      // The type left out is premium, as the quote's.
      const ok = await purchase(b, { name: 'quoted-3', region: 'id-jkt', size_gb: 150, term_months: 12, currency: 'USD', quote_id: q.id });
      expectAccepted(ok);
      expectError(await purchase(a, { ...order, name: 'quoted-4', quote_id: 'quo_neverexisted00000000000' }), 404, 'not_found', 'Quote quo_neverexisted00000000000 not found');
      await settle([ok.body.operation.id]);
    });

    it('A quote locks the price only: stock and balance are checked at purchase', async () => {
      const poor = (await call(a, 'POST', '/v1/quotes', { body: { ...order, size_gb: 10, term_months: 1 }, token: POOR_KEY })).body;
      expect(poor.amount).toBe('0.20000');
      expectError(await purchase(b, { ...order, size_gb: 10, term_months: 1, name: 'poor-quoted', quote_id: poor.id }, { token: POOR_KEY }), 402, 'insufficient_balance',
        'The wallet cannot cover 0.20000 USD; available: 0.10000 USD', { required: '0.20000', available: '0.10000', currency: 'USD' });
      const q = (await call(b, 'POST', '/v1/quotes', { body: order })).body;
      expectError(await purchase(a, { ...order, name: 'closed-quoted', zone: 'id-jkt-b', quote_id: q.id }), 409, 'out_of_stock', 'Zone id-jkt-b does not accept new disks at the moment; choose another zone');
      // Neither refusal used the quotes.
      expect((await call(a, 'GET', `/v1/quotes/${poor.id}`, { token: POOR_KEY })).body.used_at).toBeNull();
      expect((await call(b, 'GET', `/v1/quotes/${q.id}`)).body.used_at).toBeNull();
    });

    it('older than 10 minutes 409 quote_expired (seen from a process whose clock is 11 minutes ahead)', async () => {
      const q = (await call(a, 'POST', '/v1/quotes', { body: order })).body;
      const preload = join(dir.path, 'clock-ahead.cjs');
      writeFileSync(preload, CLOCK_AHEAD);
      const later = await startServerProcess({ ...env, WORKER_ENABLED: 'false', NODE_OPTIONS: `--require ${preload}`, CLOCK_AHEAD_MS: String(11 * 60_000) });
      extra.push(later);
      try {
        const before = await wallet(a);
        expectError(
          await purchase(later, { ...order, name: 'expired-quoted', quote_id: q.id }), 409, 'quote_expired',
          `Quote ${q.id} expired at ${q.expires_at} (quotes last 10 minutes); request a new one`,
        );
        // A differing member is still 400 first; the quote stays unused; nothing reserved.
        expect((await purchase(later, { ...order, size_gb: 10, name: 'expired-quoted', quote_id: q.id })).body.error.code).toBe('invalid_request');
        expect((await call(b, 'GET', `/v1/quotes/${q.id}`)).body).toEqual(q);
        expect(await wallet(b)).toEqual(before);
      } finally {
        expect(await later.stop()).toBe(0);
      }
    });
  });

  describe('Attach, detach, delete', () => {
    it('POST /v1/volumes/{id}/attach {server_id, mount_path?} (vm:write) → 202, operation volume.attach, vm_id the server, steps attaching, mounting; mount_path defaults to /mnt/<name>. Success: attached, mounted: true, server, mount_path', async () => {
      const v = await readyVolume('attach-1');
      const r = await call(b, 'POST', `/v1/volumes/${v.id}/attach`, { body: { server_id: 'vm_kweb2' } });
      expectAccepted(r);
      expect(r.body).toEqual({
        volume: v,
        operation: pendingOperation('volume.attach', v.id, 'vm_kweb2', [{ name: 'attaching', status: 'pending' }, { name: 'mounting', status: 'pending' }]),
      });
      const [entry] = await audit(a, v.id);
      expect(entry).toMatchObject({ action: 'volume.attach', request_id: r.headers.get('x-request-id'), data: { operation_id: r.body.operation.id, server_id: 'vm_kweb2', mount_path: '/mnt/attach-1' } });
      await settle([r.body.operation.id]);
      const after = { ...v, status: 'attached', server: { id: 'vm_kweb2', name: 'web-2' }, mount_path: '/mnt/attach-1', mounted: true };
      expect(await volume(a, v.id)).toEqual(after);
      expect(await operation(b, r.body.operation.id)).toEqual({
        ...r.body.operation, status: 'succeeded', steps: [{ name: 'attaching', status: 'succeeded' }, { name: 'mounting', status: 'succeeded' }],
        result: { volume_id: v.id, status: 'attached' }, finished_at: expect.stringMatching(ISO),
      });
      // A given mount path is kept.
      const w = await readyVolume('attach-2');
      const given = await call(a, 'POST', `/v1/volumes/${w.id}/attach`, { body: { server_id: 'vm_kweb2', mount_path: '/srv/db' } });
      expectAccepted(given);
      await settle([given.body.operation.id]);
      expect(await volume(b, w.id)).toMatchObject({ status: 'attached', mount_path: '/srv/db', mounted: true });
    });

    it('attach: 400 missing server_id, server in another zone, bad mount_path; 404 volume or server; 409 invalid_state: the volume is not available or has an unfinished operation', async () => {
      const v = await readyVolume('attach-errors');
      expectError(await call(a, 'POST', `/v1/volumes/${v.id}/attach`, { body: {} }), 400, 'invalid_request', 'server_id is required', { field: 'server_id' });
      expectError(await call(b, 'POST', `/v1/volumes/${v.id}/attach`, { body: { server_id: 5 } }), 400, 'invalid_request', 'server_id must be a string', { field: 'server_id' });
      expectError(await call(a, 'POST', `/v1/volumes/${v.id}/attach`, { body: { server_id: 'vm_kb1' } }), 400, 'invalid_request', `server vm_kb1 is in zone id-jkt-b; volume ${v.id} is in id-jkt-a`, { field: 'server_id' });
      expectError(
        await call(b, 'POST', `/v1/volumes/${v.id}/attach`, { body: { server_id: 'vm_kweb2', mount_path: 'srv' } }), 400, 'invalid_request',
        'mount_path must be an absolute path: "/" followed by at most 254 characters, no NUL, no "." or ".." segment; got "srv"', { field: 'mount_path' },
      );
      expectError(await call(a, 'POST', '/v1/volumes/vol_neverexisted0000000000/attach', { body: { server_id: 'vm_kweb2' } }), 404, 'not_found', 'Volume vol_neverexisted0000000000 not found');
      expectError(await call(b, 'POST', '/v1/volumes/vol_mdata1/attach', { body: { server_id: 'vm_kweb2' } }), 404, 'not_found', 'Volume vol_mdata1 not found');
      expectError(await call(a, 'POST', `/v1/volumes/${v.id}/attach`, { body: { server_id: 'vm_nope' } }), 404, 'not_found', 'Server vm_nope not found');
      expectError(await call(b, 'POST', `/v1/volumes/${v.id}/attach`, { body: { server_id: 'vm_mweb1' } }), 404, 'not_found', 'Server vm_mweb1 not found');
      expectError(await call(a, 'POST', '/v1/volumes/vol_kdata1/attach', { body: { server_id: 'vm_kweb2' } }), 409, 'invalid_state', 'Volume vol_kdata1 is attached; only an available (detached) volume can be attached');
      // 400 before 404, 404 before 409.
      expect((await call(b, 'POST', '/v1/volumes/vol_neverexisted0000000000/attach', { body: {} })).status).toBe(400);
      expect((await call(a, 'POST', '/v1/volumes/vol_kdata1/attach', { body: { server_id: 'vm_nope' } })).status).toBe(404);
      expectError(await call(b, 'POST', `/v1/volumes/${v.id}/attach`, { body: { server_id: 'vm_kweb2' }, token: tok.viewer }), 403, 'forbidden', 'Role viewer may not do this; it needs one of: developer, admin, owner');
      expect(await volume(a, v.id)).toEqual(v);
    });

    it('POST /v1/volumes/{id}/detach (vm:write; no body) → 202, operation volume.detach, steps unmounting, detaching. 409 invalid_state unless attached. Success: available, server/mount_path null, mounted false', async () => {
      const v = await readyVolume('detach-1', { server_id: 'vm_kweb2' });
      expect(v).toMatchObject({ status: 'attached', mount_path: '/mnt/detach-1' });
      const r = await call(a, 'POST', `/v1/volumes/${v.id}/detach`);
      expectAccepted(r);
      expect(r.body).toEqual({
        volume: v,
        operation: pendingOperation('volume.detach', v.id, 'vm_kweb2', [{ name: 'unmounting', status: 'pending' }, { name: 'detaching', status: 'pending' }]),
      });
      expect((await audit(b, v.id))[0]).toMatchObject({ action: 'volume.detach', data: { operation_id: r.body.operation.id, server_id: 'vm_kweb2', mount_path: '/mnt/detach-1' } });
      await settle([r.body.operation.id]);
      const after = { ...v, status: 'available', server: null, mount_path: null, mounted: false };
      expect(await volume(b, v.id)).toEqual(after);
      expect(await operation(a, r.body.operation.id)).toMatchObject({ status: 'succeeded', result: { volume_id: v.id, status: 'available' } });
      expectError(await call(b, 'POST', `/v1/volumes/${v.id}/detach`), 409, 'invalid_state', `Volume ${v.id} is available; only an attached volume can be detached`);
      expectError(await call(a, 'POST', '/v1/volumes/vol_mdata1/detach'), 404, 'not_found', 'Volume vol_mdata1 not found');
    });

    it('A failed unmount fails the operation and leaves the disk attached: never a forced detach', async () => {
      const v = await readyVolume('detach-fails', { server_id: 'vm_kweb2' });
      const r = await call(b, 'POST', `/v1/volumes/${v.id}/detach`);
      expectAccepted(r);
      await settle([r.body.operation.id], { PROVIDER_DOWN: 'true', PROVIDER_RETRY_WINDOW_MS: '0' });
      expect(await operation(a, r.body.operation.id)).toEqual({
        ...r.body.operation, status: 'failed', steps: [{ name: 'unmounting', status: 'failed' }, { name: 'detaching', status: 'pending' }],
        error: { code: 'provider_unavailable', message: 'The storage provider stayed unavailable for 0 minutes: The storage provider is down (PROVIDER_DOWN)' },
        finished_at: expect.stringMatching(ISO),
      });
      expect(await volume(b, v.id)).toEqual(v);
      expect(v).toMatchObject({ status: 'attached', server: { id: 'vm_kweb2', name: 'web-2' }, mounted: true });
    });

    it('DELETE /v1/volumes/{id} (vm:write) → 202, operation volume.delete, steps deleting; the volume becomes deleting at once. Success: deleted, deleted_at. The prepaid term is not refunded', async () => {
      const v = await readyVolume('delete-1', { term_months: 12 });
      const before = await wallet(a);
      const r = await call(b, 'DELETE', `/v1/volumes/${v.id}`);
      expectAccepted(r);
      expect(r.body).toEqual({
        volume: { ...v, status: 'deleting' },
        operation: pendingOperation('volume.delete', v.id, null, [{ name: 'deleting', status: 'pending' }]),
      });
      expect(await volume(a, v.id)).toEqual({ ...v, status: 'deleting' });
      expect((await audit(a, v.id))[0]).toMatchObject({ action: 'volume.delete', data: { operation_id: r.body.operation.id, detach: false, server_id: null, size_gb: 10 } });
      // Already deleting: 409.
      expectError(await call(a, 'DELETE', `/v1/volumes/${v.id}`), 409, 'invalid_state', `Volume ${v.id} already has an operation pending or running (${r.body.operation.id}); wait for it to end`, { operation_id: r.body.operation.id });
      await settle([r.body.operation.id]);
      const gone = await volume(b, v.id);
      expect(gone).toEqual({ ...v, status: 'deleted', deleted_at: expect.stringMatching(ISO), deleted_reason: 'customer' });
      expect(await operation(a, r.body.operation.id)).toMatchObject({ status: 'succeeded', result: { volume_id: v.id, status: 'deleted' } });
      // Deleted: 409 again; listed only with status=deleted.
      expectError(await call(a, 'DELETE', `/v1/volumes/${v.id}`), 409, 'invalid_state', `Volume ${v.id} is deleted`);
      expect((await listed(b, 'status=deleted&name=delete-1')).map((x) => x.id)).toEqual([v.id]);
      expect(await listed(a, 'name=delete-1')).toEqual([]);
      // 12 months paid, deleted at once: nothing comes back.
      expect(await wallet(b)).toEqual(before);
    });

    it('DELETE: 409 invalid_state attached without ?detach=true; delete_protection on; with ?detach=true steps unmounting, detaching, deleting', async () => {
      const v = await readyVolume('delete-2', { server_id: 'vm_kweb2', delete_protection: true });
      expect(v.delete_protection).toBe(true);
      expectError(await call(a, 'DELETE', `/v1/volumes/${v.id}?detach=true`), 409, 'invalid_state', `Volume ${v.id} has delete_protection on; turn it off (PATCH) before deleting it`);
      expect((await call(b, 'PATCH', `/v1/volumes/${v.id}`, { body: { delete_protection: false } })).status).toBe(200);
      const unprotected = { ...v, delete_protection: false };
      expectError(await call(a, 'DELETE', `/v1/volumes/${v.id}`), 409, 'invalid_state', `Volume ${v.id} is attached to server vm_kweb2; detach it first or delete with ?detach=true`);
      expectError(await call(b, 'DELETE', `/v1/volumes/${v.id}?detach=false`), 409, 'invalid_state', `Volume ${v.id} is attached to server vm_kweb2; detach it first or delete with ?detach=true`);
      expectError(await call(a, 'DELETE', `/v1/volumes/${v.id}?detach=yes`), 400, 'invalid_request', 'detach must be true or false', { field: 'detach' });
      expect(await volume(b, v.id)).toEqual(unprotected);
      const r = await call(b, 'DELETE', `/v1/volumes/${v.id}?detach=true`);
      expectAccepted(r);
      expect(r.body.volume).toEqual({ ...unprotected, status: 'deleting' });
      expect(r.body.operation).toMatchObject({
        type: 'volume.delete', vm_id: 'vm_kweb2',
        steps: [{ name: 'unmounting', status: 'pending' }, { name: 'detaching', status: 'pending' }, { name: 'deleting', status: 'pending' }],
      });
      await settle([r.body.operation.id]);
      expect(await volume(a, v.id)).toEqual({ ...unprotected, status: 'deleted', server: null, mount_path: null, mounted: false, deleted_at: expect.stringMatching(ISO), deleted_reason: 'customer' });
      expectError(await call(b, 'DELETE', '/v1/volumes/vol_mdata1'), 404, 'not_found', 'Volume vol_mdata1 not found');
    });
  });

  describe('Edit: PATCH /v1/volumes/{id} {name?, note?, labels?, delete_protection?} (vm:write) → 200 with the Volume, synchronous', () => {
    it('→ 200 with the Volume, synchronous; labels replaces the whole map; an audit row volume.update with the changed members, old and new', async () => {
      const v = await readyVolume('edit-1', { labels: { env: 'dev', team: 'data' } });
      const r = await call(a, 'PATCH', `/v1/volumes/${v.id}`, { body: { name: 'edit-1b', note: 'nightly', labels: { tier: 'gold' }, delete_protection: true } });
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/^application\/json/);
      const edited = { ...v, name: 'edit-1b', note: 'nightly', labels: { tier: 'gold' }, delete_protection: true };
      expect(r.body).toEqual(edited);
      expect(await volume(b, v.id)).toEqual(edited);
      const [entry] = await audit(b, v.id);
      expect(entry).toEqual({
        id: expect.stringMatching(AUD_ID), created_at: expect.stringMatching(ISO), action: 'volume.update',
        actor: { type: 'api_key', id: expect.stringMatching(/^key_/), name: 'ci' }, target: { type: 'volume', id: v.id }, ip: '127.0.0.1',
        request_id: r.headers.get('x-request-id'), client_request_id: null,
        data: {
          changes: {
            name: { old: 'edit-1', new: 'edit-1b' }, note: { old: null, new: 'nightly' },
            labels: { old: { env: 'dev', team: 'data' }, new: { tier: 'gold' } }, delete_protection: { old: false, new: true },
          },
        },
      });
      // Members left out are unchanged; {} removes every label; note null clears it.
      const cleared = await call(b, 'PATCH', `/v1/volumes/${v.id}`, { body: { labels: {}, note: null } });
      expect([cleared.status, cleared.body]).toEqual([200, { ...edited, labels: {}, note: null }]);
      expect((await audit(a, v.id))[0].data).toEqual({ changes: { note: { old: 'nightly', new: null }, labels: { old: { tier: 'gold' }, new: {} } } });
      // The same body again changes nothing: 200, no audit row.
      const count = (await audit(b, v.id)).length;
      expect((await call(a, 'PATCH', `/v1/volumes/${v.id}`, { body: { labels: {}, note: null } })).body).toEqual(cleared.body);
      expect(await audit(b, v.id)).toHaveLength(count);
    });

    it('name conflict: 409 conflict; PATCH on a deleted volume: 409 invalid_state; 404; 400', async () => {
      const v = await readyVolume('edit-2');
      expectError(await call(b, 'PATCH', `/v1/volumes/${v.id}`, { body: { name: 'data-1' } }), 409, 'conflict', 'The organization already has a volume named data-1; names are unique among volumes not deleted', { field: 'name' });
      expectError(await call(a, 'PATCH', '/v1/volumes/vol_mdata1', { body: { note: 'x' } }), 404, 'not_found', 'Volume vol_mdata1 not found');
      expectError(await call(b, 'PATCH', `/v1/volumes/${v.id}`, { body: { delete_protection: 'yes' } }), 400, 'invalid_request', 'delete_protection must be true or false', { field: 'delete_protection' });
      expectError(await call(a, 'PATCH', `/v1/volumes/${v.id}`, { body: { note: 'x'.repeat(1001) } }), 400, 'invalid_request', 'note must be at most 1000 characters', { field: 'note' });
      const del = await call(a, 'DELETE', `/v1/volumes/${v.id}`);
      await settle([del.body.operation.id]);
      expectError(await call(b, 'PATCH', `/v1/volumes/${v.id}`, { body: { note: 'too late' } }), 409, 'invalid_state', `Volume ${v.id} is deleted and cannot be changed`);
      // invalid_state before conflict.
      expect((await call(a, 'PATCH', `/v1/volumes/${v.id}`, { body: { name: 'data-1' } })).body.error.code).toBe('invalid_state');
      expectError(await call(a, 'PATCH', `/v1/volumes/${v.id}`, { body: { note: 'x' }, token: RO_KEY }), 403, 'forbidden', 'The API key lacks the scope vm:write');
      expectError(await call(b, 'PATCH', `/v1/volumes/${v.id}`, { body: { note: 'x' }, token: tok.viewer }), 403, 'forbidden', 'Role viewer may not do this; it needs one of: developer, admin, owner');
    });

    it('Turning delete_protection off needs admin or owner (or an API key with vm:write): a developer session gets 403', async () => {
      const v = await readyVolume('protected-1', { delete_protection: true });
      const refusal = 'Role developer may not turn delete_protection off; it needs one of: admin, owner';
      expectError(await call(a, 'PATCH', `/v1/volumes/${v.id}`, { body: { delete_protection: false }, token: tok.dev }), 403, 'forbidden', refusal);
      expectError(await call(b, 'PATCH', `/v1/volumes/${v.id}`, { body: { delete_protection: false, note: 'x' }, token: tok.dev }), 403, 'forbidden', refusal);
      // 403 before 400: whatever else the body holds.
      expectError(await call(a, 'PATCH', `/v1/volumes/${v.id}`, { body: { delete_protection: false, name: '-bad' }, token: tok.dev }), 403, 'forbidden', refusal);
      expect(await volume(a, v.id)).toEqual(v);
      // A developer may turn it on, and edit everything else.
      expect((await call(b, 'PATCH', `/v1/volumes/${v.id}`, { body: { note: 'by dev', delete_protection: true }, token: tok.dev })).body).toEqual({ ...v, note: 'by dev' });
      for (const [token, p] of [[tok.admin, a], [tok.owner, b], [KEY, a]] as const) {
        const off = await call(p, 'PATCH', `/v1/volumes/${v.id}`, { body: { delete_protection: false }, token });
        expect([off.status, off.body.delete_protection]).toEqual([200, false]);
        expect((await call(p, 'PATCH', `/v1/volumes/${v.id}`, { body: { delete_protection: true }, token: tok.dev })).body.delete_protection).toBe(true);
      }
      const [entry] = (await audit(a, v.id)).filter((e: { actor: { email?: string } }) => e.actor.email === 'admin@k.test');
      expect(entry.data).toEqual({ changes: { delete_protection: { old: true, new: false } } });
    });
  });

  describe('GET /v1/volumes gains filters region, zone, type, status, server_id, name, label (key=value, repeatable, all must match), expires_before; status=deleted lists deleted ones', () => {
    it('each filter, alone and together (organization m: its own volumes only)', async () => {
      const buy = async (body: Record<string, unknown>) => {
        const r = await purchase(a, body, { token: OTHER_KEY });
        expectAccepted(r);
        return r.body;
      };
      const one = await buy({ name: 'f-one', labels: { env: 'prod', team: 'db' } });
      const twelve = await buy({ name: 'f-twelve', term_months: 12, labels: { env: 'prod', team: 'web' } });
      const ssd = await buy({ name: 'f-ssd', type: 'ssd', size_gb: 20, labels: { env: 'dev' } });
      const served = await buy({ name: 'f-served', server_id: 'vm_mweb1', labels: { env: '' } });
      const gone = await buy({ name: 'f-gone' });
      await settle([one, twelve, ssd, served, gone].map((x) => x.operation.id), {}, OTHER_KEY);
      const del = await call(b, 'DELETE', `/v1/volumes/${gone.volume.id}`, { token: OTHER_KEY });
      await settle([del.body.operation.id], {}, OTHER_KEY);
      const names = async (query: string) => {
        const r = await call(b, 'GET', `/v1/volumes?limit=100&${query}`, { token: OTHER_KEY });
        expect([query, r.status]).toEqual([query, 200]);
        return r.body.volumes.map((v: { name: string }) => v.name).filter((n: string) => n.startsWith('f-') || n === 'data-1' || n === 'unique-1');
      };
      const all = ['f-served', 'f-ssd', 'f-twelve', 'f-one', 'unique-1', 'data-1'];
      expect(await names('')).toEqual(all);
      expect(await names('region=id-jkt')).toEqual(all);
      expect(await names('region=sg-sin')).toEqual([]);
      expect(await names('zone=id-jkt-a')).toEqual(all);
      expect(await names('zone=id-jkt-b')).toEqual([]);
      expect(await names('type=ssd')).toEqual(['f-ssd']);
      expect(await names('type=premium')).toEqual(all.filter((n) => n !== 'f-ssd'));
      expect(await names('status=attached')).toEqual(['f-served', 'data-1']);
      expect(await names('status=available')).toEqual(['f-ssd', 'f-twelve', 'f-one', 'unique-1']);
      expect(await names('status=deleted')).toEqual(['f-gone']);
      expect(await names('server_id=vm_mweb1')).toEqual(['f-served', 'data-1']);
      expect(await names('name=f-one')).toEqual(['f-one']);
      expect(await names('label=env=prod')).toEqual(['f-twelve', 'f-one']);
      expect(await names('label=env=prod&label=team=db')).toEqual(['f-one']);
      expect(await names('label=env=')).toEqual(['f-served']);
      expect(await names('label=env=prod&label=team=none')).toEqual([]);
      const twoMonths = addMonths(new Date().toISOString(), 2);
      expect(await names(`expires_before=${twoMonths}`)).toEqual(['f-served', 'f-ssd', 'f-one', 'unique-1', 'data-1']);
      expect(await names(`expires_before=${twoMonths}&type=premium&label=env=prod&status=available&region=id-jkt&zone=id-jkt-a`)).toEqual(['f-one']);
      // The whole answer: the Volume objects and next_cursor.
      const whole = await call(a, 'GET', '/v1/volumes?name=f-twelve', { token: OTHER_KEY });
      expect(whole.body).toEqual({ volumes: [await volume(b, twelve.volume.id, OTHER_KEY)], next_cursor: null });
      // Bad values: 400 naming the parameter.
      const bad: [string, string, string][] = [
        ['type=hdd', 'type', 'type must be premium or ssd'],
        ['status=gone', 'status', 'status must be one of creating, available, attached, suspended, deleting, deleted'],
        ['region=', 'region', 'region must not be empty'],
        ['label=nokey', 'label', 'label must be key=value, got "nokey"'],
        ['expires_before=tomorrow', 'expires_before', 'expires_before must be an ISO 8601 date-time with a time zone, such as 2026-12-31T00:00:00Z, or a date'],
      ];
      for (const [query, field, message] of bad) expectError(await call(a, 'GET', `/v1/volumes?${query}`, { token: OTHER_KEY }), 400, 'invalid_request', message, { field });
    });
  });

  describe('Every new POST and DELETE accepts Idempotency-Key and stores its 2xx, 402, 404 and 409 answers (across processes)', () => {
    it('POST /v1/volumes on one process, the retry on the other: the same 202 to the byte, one volume, one hold; another body with the key is 409 idempotency_conflict', async () => {
      const before = await wallet(a);
      const body = { name: 'idem-1', region: 'id-jkt', size_gb: 10, term_months: 1, currency: 'USD' };
      const first = await call(a, 'POST', '/v1/volumes', { body, idem: 'lc-purchase-1' });
      expectAccepted(first);
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      const again = await call(b, 'POST', '/v1/volumes', { body, idem: 'lc-purchase-1' });
      expect([again.status, again.text, again.headers.get('idempotent-replayed'), again.headers.get('location')]).toEqual([202, first.text, 'true', first.headers.get('location')]);
      expect((await listed(a, 'name=idem-1&status=creating')).map((v) => v.id)).toEqual([first.body.volume.id]);
      expect(await wallet(b)).toEqual({ ...before, USD: { available: fmtUsd(usd(before.USD.available) - 20000n), reserved: fmtUsd(usd(before.USD.reserved) + 20000n) } });
      expectError(
        await call(b, 'POST', '/v1/volumes', { body: { ...body, size_gb: 20 }, idem: 'lc-purchase-1' }), 409, 'idempotency_conflict',
        'This Idempotency-Key was already used with a different request; use a new key for a new request',
      );
      await settle([first.body.operation.id]);
      // After the operation ended, the replay is still the original answer (no second purchase).
      const late = await call(a, 'POST', '/v1/volumes', { body, idem: 'lc-purchase-1' });
      expect([late.status, late.text, late.headers.get('idempotent-replayed')]).toEqual([202, first.text, 'true']);
      expect(await wallet(a)).toEqual({ ...before, USD: { available: fmtUsd(usd(before.USD.available) - 20000n), reserved: before.USD.reserved } });
    });

    it('the stored 402, 404 and 409 are replayed on the other process; a 400 stores nothing', async () => {
      const stored: [string, Record<string, unknown>, string, number][] = [
        ['lc-402', { name: 'idem-poor' }, POOR_KEY, 402],
        ['lc-404', { name: 'idem-404', server_id: 'vm_nope' }, KEY, 404],
        ['lc-409', { name: 'data-1' }, KEY, 409],
        ['lc-409-stock', { name: 'idem-stock', zone: 'id-jkt-b' }, KEY, 409],
      ];
      for (const [idem, body, token, status] of stored) {
        const first = await purchase(a, body, { token, idem });
        expect([idem, first.status]).toEqual([idem, status]);
        const again = await purchase(b, body, { token, idem });
        expect([idem, again.status, again.text, again.headers.get('idempotent-replayed')]).toEqual([idem, status, first.text, 'true']);
      }
      const bad = await purchase(a, { name: 'idem-400', size_gb: 15 }, { idem: 'lc-400' });
      expect(bad.status).toBe(400);
      const fixed = await purchase(b, { name: 'idem-400' }, { idem: 'lc-400' });
      expectAccepted(fixed);
      expect(fixed.headers.get('idempotent-replayed')).toBeNull();
      await settle([fixed.body.operation.id]);
    });

    it('attach, detach and DELETE: the replay on the other process is the stored 202, not a second operation; POST /v1/quotes replays its 201', async () => {
      const v = await readyVolume('idem-actions');
      const attach = await call(a, 'POST', `/v1/volumes/${v.id}/attach`, { body: { server_id: 'vm_kweb2' }, idem: 'lc-attach' });
      expectAccepted(attach);
      const attachAgain = await call(b, 'POST', `/v1/volumes/${v.id}/attach`, { body: { server_id: 'vm_kweb2' }, idem: 'lc-attach' });
      expect([attachAgain.status, attachAgain.text, attachAgain.headers.get('idempotent-replayed')]).toEqual([202, attach.text, 'true']);
      await settle([attach.body.operation.id]);
      expect([(await call(a, 'POST', `/v1/volumes/${v.id}/attach`, { body: { server_id: 'vm_kweb2' }, idem: 'lc-attach' })).text]).toEqual([attach.text]);
      const detach = await call(b, 'POST', `/v1/volumes/${v.id}/detach`, { idem: 'lc-detach' });
      expectAccepted(detach);
      expect((await call(a, 'POST', `/v1/volumes/${v.id}/detach`, { idem: 'lc-detach' })).text).toBe(detach.text);
      await settle([detach.body.operation.id]);
      const del = await call(a, 'DELETE', `/v1/volumes/${v.id}`, { idem: 'lc-delete' });
      expectAccepted(del);
      const delAgain = await call(b, 'DELETE', `/v1/volumes/${v.id}`, { idem: 'lc-delete' });
      expect([delAgain.status, delAgain.text, delAgain.headers.get('idempotent-replayed')]).toEqual([202, del.text, 'true']);
      // The key on another route is another request.
      expectError(await call(b, 'POST', `/v1/volumes/${v.id}/detach`, { idem: 'lc-delete' }), 409, 'idempotency_conflict', 'This Idempotency-Key was already used with a different request; use a new key for a new request');
      await settle([del.body.operation.id]);
      const ops = (await call(a, 'GET', '/v1/operations?limit=100')).body.operations.filter((o: { volume_id: string }) => o.volume_id === v.id);
      expect(ops.map((o: { type: string }) => o.type)).toEqual(['volume.delete', 'volume.detach', 'volume.attach', 'volume.create']);
      const quote = await call(b, 'POST', '/v1/quotes', { body: { region: 'id-jkt', size_gb: 10, term_months: 1, currency: 'USD' }, idem: 'lc-quote' });
      expect(quote.status).toBe(201);
      const quoteAgain = await call(a, 'POST', '/v1/quotes', { body: { region: 'id-jkt', size_gb: 10, term_months: 1, currency: 'USD' }, idem: 'lc-quote' });
      expect([quoteAgain.status, quoteAgain.text, quoteAgain.headers.get('idempotent-replayed')]).toEqual([201, quote.text, 'true']);
    });
  });

  describe('The storage provider', () => {
    it('while the provider is known to be down, new purchases, attaches, detaches and deletes answer 503 provider_unavailable without reserving anything; GET /v1/ready reports it but stays 200', async () => {
      const attached = await readyVolume('down-attached', { server_id: 'vm_kweb2' });
      const loose = await readyVolume('down-loose');
      const down = await startServerProcess({ ...env, WORKER_ENABLED: 'false', PROVIDER_DOWN: 'true' });
      extra.push(down);
      try {
        let ready: Answer | undefined;
        // PROVIDER_DOWN takes the simulated compute provider down too (each circuit opens on its own probes).
        const bothDown = (r?: Answer) => r?.body.checks.provider === 'down' && r?.body.checks.compute_provider === 'down';
        for (let i = 0; i < 100 && !bothDown(ready); i++) {
          ready = await call(down, 'GET', '/v1/ready');
          if (!bothDown(ready)) await new Promise((r) => setTimeout(r, 100));
        }
        expect([ready!.status, ready!.body]).toEqual([
          200,
          { status: 'ready', checks: { database: 'ok', migrations: 'ok', redis: 'not_configured', provider: 'down', compute_provider: 'down' } },
        ]);
        expect((await call(a, 'GET', '/v1/ready')).body.checks.provider).toBe('ok');
        const before = await wallet(a);
        const sg = await options(b, 'sg-sin');
        const message = 'The storage provider is unavailable; nothing was reserved. Retry later';
        expectError(await purchase(down, { name: 'down-1' }, { idem: 'lc-down-1' }), 503, 'provider_unavailable', message);
        expectError(await purchase(down, { name: 'down-1', region: 'sg-sin', size_gb: 50 }), 503, 'provider_unavailable', message);
        expectError(await call(down, 'POST', `/v1/volumes/${loose.id}/attach`, { body: { server_id: 'vm_kweb2' } }), 503, 'provider_unavailable', message);
        expectError(await call(down, 'POST', `/v1/volumes/${attached.id}/detach`), 503, 'provider_unavailable', message);
        expectError(await call(down, 'DELETE', `/v1/volumes/${attached.id}?detach=true`), 503, 'provider_unavailable', message);
        // 402 comes before 503.
        expect((await purchase(down, { name: 'down-poor' }, { token: POOR_KEY })).status).toBe(402);
        // Nothing reserved or changed, nothing stored for the key; everything else is served.
        expect(await wallet(down)).toEqual(before);
        expect(await options(a, 'sg-sin')).toEqual(sg);
        expect(await volume(b, attached.id)).toEqual(attached);
        expect(await volume(a, loose.id)).toEqual(loose);
        expect(await listed(b, 'name=down-1&status=creating')).toEqual([]);
        const retry = await purchase(a, { name: 'down-1' }, { idem: 'lc-down-1' });
        expectAccepted(retry);
        expect(retry.headers.get('idempotent-replayed')).toBeNull();
        await settle([retry.body.operation.id]);
      } finally {
        expect(await down.stop()).toBe(0);
      }
    });
  });

  describe('Every action on a volume answers 202 {volume, operation} with Location; its vm_id is the server the disk is on or goes to, null when none', () => {
    it('renew of an attached disk: vm_id its server; of a detached one: null', async () => {
      const on = await readyVolume('renew-on', { server_id: 'vm_kweb2' });
      const off = await readyVolume('renew-off');
      const r1 = await call(a, 'POST', `/v1/volumes/${on.id}/renew`, { body: { term_months: 1 } });
      expectAccepted(r1);
      expect(r1.body.operation).toMatchObject({ type: 'volume.renew', vm_id: 'vm_kweb2', volume_id: on.id });
      const r2 = await call(b, 'POST', `/v1/volumes/${off.id}/renew`, { body: { term_months: 1 } });
      expectAccepted(r2);
      expect(r2.body.operation).toMatchObject({ type: 'volume.renew', vm_id: null, volume_id: off.id });
      expect((await audit(b, on.id))[0]).toMatchObject({ action: 'volume.renew', request_id: r1.headers.get('x-request-id'), target: { type: 'volume', id: on.id } });
      await settle([r1.body.operation.id, r2.body.operation.id]);
      expect((await volume(a, on.id)).expires_at).toBe(addMonths(on.expires_at, 1));
    });
  });

  describe('Operations: long-poll and ETag', () => {
    it('GET /v1/operations/{id}?wait=SECONDS (1–60; other values 400 naming wait) answers with the same body as without wait; an operation that has ended answers at once', async () => {
      const r = await purchase(a, { name: 'polled' });
      expectAccepted(r);
      const id = r.body.operation.id;
      for (const wait of ['0', '61', 'x', '1.5', '']) {
        expectError(await call(b, 'GET', `/v1/operations/${id}?wait=${wait}`), 400, 'invalid_request', 'wait must be a whole number of seconds from 1 to 60', { field: 'wait' });
      }
      const waiting = call(a, 'GET', `/v1/operations/${id}?wait=60`);
      await settle([id]);
      const answered = await waiting;
      expect([answered.status, answered.body]).toEqual([200, await operation(b, id)]);
      expect(answered.body.status).toBe('succeeded');
      expect((await call(b, 'GET', `/v1/operations/${id}?wait=60`)).body).toEqual(answered.body);
    });

    it('Every Operation response carries an ETag; If-None-Match with the current one answers 304 with no body', async () => {
      const r = await purchase(b, { name: 'etagged' });
      const id = r.body.operation.id;
      const first = await call(a, 'GET', `/v1/operations/${id}`);
      const etag = first.headers.get('etag')!;
      expect(etag).toMatch(/^(W\/)?"[^"]+"$/);
      expect((await call(b, 'GET', `/v1/operations/${id}`)).headers.get('etag')).toBe(etag);
      const same = await call(b, 'GET', `/v1/operations/${id}`, { headers: { 'If-None-Match': etag } });
      expect([same.status, same.text, same.headers.get('etag')]).toEqual([304, '', etag]);
      await settle([id]);
      const changed = await call(a, 'GET', `/v1/operations/${id}`, { headers: { 'If-None-Match': etag } });
      expect(changed.status).toBe(200);
      expect(changed.body.status).toBe('succeeded');
      expect(changed.headers.get('etag')).not.toBe(etag);
    });
  });

  it('at the end, `cli verify` finds every invariant holding: wallets = ledger, every hold settled once, capacity counters = live volumes, no server over its limit, provider disks = volumes', () => {
    const r = runCli(['verify'], env);
    expect({ status: r.status, stderr: r.stderr, violations: JSON.parse(r.stdout).violations }).toEqual({ status: 0, stderr: '', violations: [] });
  });
});
