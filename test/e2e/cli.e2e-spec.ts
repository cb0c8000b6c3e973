import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { statSync, writeFileSync } from 'node:fs';
import { Client } from 'pg';
import { MIGRATIONS } from '../../migrations';
import { CREDENTIAL_CACHE_TTL_MS } from '../../src/modules/auth/application/credential-cache';
import { createTestDatabase, TestDatabase } from '../support/database';
import { ROOT, childEnv, runCli, runCliInProcess, startServerProcess, tempDir } from '../support/processes';
import { validatedFetch } from '../support/openapi-validation';

const EXAMPLE = join(ROOT, 'test/fixtures/seed-example.json');
const EXAMPLE_TOKEN = 'cds_live_optionalFixedTokenOf32CharsOrMore';

/**
 * The operator CLI as an operator runs it: a real process on a real database (a temp embedded
 * data dir, or a fresh PostgreSQL schema when DATABASE_URL is set). JSON on stdout and exit 0,
 * or {"error":{code,message}} on stderr and exit 1. Each command family runs at least once as a
 * process (SPAWN); its other cases run the CLI's same code in this process (runCliInProcess: the
 * same application context per command, without the process start).
 */
const SPAWN = true;

describe('operator CLI', () => {
  let db: TestDatabase;
  let dir: ReturnType<typeof tempDir>;
  let env: Record<string, string | undefined>;

  const sql = async <T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> => {
    // On the embedded engine the data dir takes one process at a time: read it through the CLI-free
    // server process only when needed; here, through the PostgreSQL URL or a short-lived server.
    if (!db.url) throw new Error('sql() needs PostgreSQL');
    const c = new Client({ connectionString: db.url });
    await c.connect();
    try {
      return (await c.query(text, params)).rows as T[];
    } finally {
      await c.end();
    }
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    dir = tempDir('cds-cli-');
    env = db.url ? { DATABASE_URL: db.url } : { DATA_DIR: join(dir.path, 'data') };
  });
  afterAll(async () => {
    await db?.drop();
    dir?.remove();
  });

  const cli = async (args: string[], spawn: boolean, runEnv = env) => (spawn ? runCli(args, runEnv) : runCliInProcess(args, runEnv));
  const ok = async (args: string[], spawn = false): Promise<Record<string, unknown>> => {
    const r = await cli(args, spawn);
    if (r.status !== 0) throw new Error(`cli ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
    expect(r.stderr).toBe('');
    return JSON.parse(r.stdout) as Record<string, unknown>;
  };
  const fails = async (args: string[], spawn = false): Promise<{ code: string; message: string }> => {
    const r = await cli(args, spawn);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    const parsed = JSON.parse(r.stderr) as { error: { code: string; message: string } };
    expect(Object.keys(parsed)).toEqual(['error']);
    expect(Object.keys(parsed.error).sort()).toEqual(['code', 'message']);
    return parsed.error;
  };

  it('migrate applies the migrations once, then has nothing to do', async () => {
    // Every migration of this build, in order (the list grows with each one).
    expect(await ok(['migrate'], SPAWN)).toEqual({ applied: MIGRATIONS.map((m) => new m().name) });
    expect(await ok(['migrate'])).toEqual({ applied: [] });
  });

  it('seed loads the example of seed-format.md and prints what it created, with every token', async () => {
    const out = await ok(['seed', EXAMPLE], SPAWN);
    expect(out).toEqual({
      regions: ['id-jkt'],
      server_plans: [],
      images: [],
      templates: [],
      organizations: [
        {
          id: 'org_acme',
          users: [{ id: expect.stringMatching(/^usr_[A-Za-z0-9]{20,}$/), email: 'owner@acme.test' }],
          api_keys: [{ id: expect.stringMatching(/^key_[A-Za-z0-9]{20,}$/), name: 'ci', token: EXAMPLE_TOKEN }],
          servers: ['vm_web1'],
          volumes: ['vol_data1'],
        },
      ],
    });
  });

  it('a second load of the same file exits 1 with code conflict and changes nothing', async () => {
    const before = await ok(['wallet:credit', '--org', 'org_acme', '--currency', 'IDR', '--amount', '1']);
    const error = await fails(['seed', EXAMPLE]);
    expect(error).toEqual({ code: 'conflict', message: 'Region id-jkt, one of its zones or offers, or its IPv6 prefix, exists already' });
    const after = await ok(['wallet:credit', '--org', 'org_acme', '--currency', 'IDR', '--amount', '1']);
    expect(before).toEqual({ org_id: 'org_acme', currency: 'IDR', available: '1500001', reserved: '0' });
    expect(after).toEqual({ org_id: 'org_acme', currency: 'IDR', available: '1500002', reserved: '0' });
    if (db.url) {
      expect(await sql('SELECT count(*)::int AS n FROM organizations')).toEqual([{ n: 1 }]);
      expect(await sql('SELECT count(*)::int AS n FROM volumes')).toEqual([{ n: 1 }]);
    }
  });

  it('a file whose new organization comes with an existing region writes nothing at all', async () => {
    const file = join(dir.path, 'partial.json');
    writeFileSync(file, JSON.stringify({
      regions: [],
      organizations: [
        { id: 'org_fresh', name: 'Fresh', members: [], api_keys: [], servers: [], volumes: [] },
        { id: 'org_acme', name: 'Dup', members: [], api_keys: [], servers: [], volumes: [] },
      ],
    }));
    expect(await fails(['seed', file])).toEqual({ code: 'conflict', message: 'Organization org_acme exists already' });
    if (db.url) expect(await sql("SELECT id FROM organizations WHERE id = 'org_fresh'")).toEqual([]);
  });

  it('seed refuses a malformed file naming the member', async () => {
    const file = join(dir.path, 'bad.json');
    writeFileSync(file, JSON.stringify({ regions: [{ id: 'r1', name: 'R', capacity_gb: -1, zones: [], volume_offers: [] }], organizations: [] }));
    expect(await fails(['seed', file])).toEqual({ code: 'invalid_request', message: 'Seed file: regions[0].capacity_gb must not be less than 0' });
    expect((await fails(['seed', join(dir.path, 'missing.json')])).code).toBe('invalid_request');
  });

  it('wallet:credit adds exact amounts and refuses bad ones', async () => {
    expect(await ok(['wallet:credit', '--org', 'org_acme', '--currency', 'USD', '--amount', '0.00001'], SPAWN)).toEqual({
      org_id: 'org_acme', currency: 'USD', available: '100.00001', reserved: '0.00000',
    });
    expect(await fails(['wallet:credit', '--org', 'org_acme', '--currency', 'USD', '--amount', '0.000001'])).toEqual({
      code: 'invalid_request', message: 'amount must be a decimal with at most 5 decimals for USD, got "0.000001"',
    });
    expect(await fails(['wallet:credit', '--org', 'org_acme', '--currency', 'EUR', '--amount', '1'])).toEqual({ code: 'invalid_request', message: 'currency must be USD or IDR' });
    expect(await fails(['wallet:credit', '--org', 'org_nope', '--currency', 'USD', '--amount', '1'])).toEqual({ code: 'not_found', message: 'Organization org_nope not found' });
    expect(await fails(['wallet:credit', '--org', 'org_acme', '--currency', 'USD'])).toEqual({ code: 'invalid_request', message: '--amount is required' });
  });

  it('apikey:create makes a key that works over HTTP; apikey:revoke stops it', async () => {
    const created = await ok(['apikey:create', '--org', 'org_acme', '--name', 'deploy', '--scopes', 'vm:read'], SPAWN);
    expect(created).toEqual({
      id: expect.stringMatching(/^key_[A-Za-z0-9]{20,}$/),
      org_id: 'org_acme',
      name: 'deploy',
      scopes: ['vm:read'],
      token: expect.stringMatching(/^cds_live_[A-Za-z0-9]{32,}$/),
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    const token = created.token as string;

    const server = await startServerProcess({ ...env, DEMO_SEED: 'false', WORKER_ENABLED: 'false' });
    try {
      const res = await validatedFetch(`${server.url}/v1/wallet`, { headers: { Authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({
        balances: [
          { currency: 'USD', available: '100.00001', reserved: '0.00000' },
          { currency: 'IDR', available: '1500002', reserved: '0' },
        ],
      });
      if (db.url) {
        // The revocation takes effect on the running server within 1 s (its credential cache's lifetime).
        const revokedAt = Date.now();
        const revoked = await ok(['apikey:revoke', '--id', created.id as string], SPAWN);
        expect(revoked).toEqual({ id: created.id, org_id: 'org_acme', revoked_at: expect.stringMatching(/Z$/) });
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, revokedAt + CREDENTIAL_CACHE_TTL_MS + 50 - Date.now())));
        const after = await validatedFetch(`${server.url}/v1/wallet`, { headers: { Authorization: `Bearer ${token}` } });
        expect(after.status).toBe(401);
        expect(((await after.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
      }
    } finally {
      await server.stop();
    }
    if (!db.url) {
      expect(await ok(['apikey:revoke', '--id', created.id as string], SPAWN)).toEqual({ id: created.id, org_id: 'org_acme', revoked_at: expect.stringMatching(/Z$/) });
    }
    expect(await fails(['apikey:revoke', '--id', 'key_unknown'])).toEqual({ code: 'not_found', message: 'API key key_unknown not found' });
    expect(await fails(['apikey:create', '--org', 'org_acme', '--name', 'x', '--scopes', 'vm:admin'])).toEqual({
      code: 'invalid_request', message: 'scopes: unknown scope "vm:admin"; allowed: vm:read, vm:write, billing:read, billing:write, webhooks:write, audit:read',
    });
  });

  it('region:vcpus, purchases:pause and purchases:resume print the new state', async () => {
    expect(await ok(['region:vcpus', '--region', 'id-jkt', '--vcpus', '12'], SPAWN)).toEqual({ id: 'id-jkt', name: 'Jakarta', vcpu_capacity: 12, vcpus_used: 0 });
    expect(await ok(['purchases:pause', '--region', 'id-jkt'], SPAWN)).toEqual({ global: false, regions: { 'id-jkt': true } });
    expect(await ok(['purchases:pause'])).toEqual({ global: true, regions: { 'id-jkt': true } });
    expect(await ok(['purchases:resume'])).toEqual({ global: false, regions: { 'id-jkt': true } });
    expect(await ok(['purchases:resume', '--region', 'id-jkt'])).toEqual({ global: false, regions: { 'id-jkt': false } });
    expect(await fails(['region:vcpus', '--region', 'nowhere', '--vcpus', '1'])).toEqual({ code: 'not_found', message: 'Region nowhere not found' });
    expect(await fails(['purchases:resume', '--region', 'nowhere'])).toEqual({ code: 'not_found', message: 'Region nowhere not found' });
  });

  it('an unknown command or option, a missing or extra argument exits 1 with invalid_request naming it', async () => {
    const hint = '; npm run cli -- --help lists the commands and their options';
    expect(await fails(['explode'], SPAWN)).toEqual({ code: 'invalid_request', message: `unknown command 'explode'${hint}` });
    expect(await fails(['wallet:credit', '--bogus', 'x'])).toEqual({ code: 'invalid_request', message: `unknown option '--bogus'${hint}` });
    expect(await fails(['seed'])).toEqual({ code: 'invalid_request', message: `missing required argument 'file'${hint}` });
    expect(await fails(['seed', 'a.json', 'b.json'])).toEqual({ code: 'invalid_request', message: `too many arguments for 'seed'. Expected 1 argument but got 2.${hint}` });
    expect(await fails(['verify', '--org', 'x'])).toEqual({ code: 'invalid_request', message: `unknown option '--org'${hint}` });
  });

  it('--help, help COMMAND and no command print readable help on stdout and exit 0, touching no database', async () => {
    const help = async (args: string[], spawn = false): Promise<string> => {
      const r = await cli(args, spawn);
      expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
      return r.stdout;
    };
    const top = await help(['--help'], SPAWN);
    expect(top).toMatch(/^Usage: npm run cli -- <command> \[options\]\n/);
    for (const command of ['migrate', 'seed <file>', 'wallet:credit [options]', 'apikey:create [options]', 'apikey:revoke [options]', 'zone:set [options]', 'region:capacity [options]', 'region:vcpus [options]', 'purchases:pause [options]', 'purchases:resume [options]', 'verify']) {
      expect(top).toContain(`  ${command} `);
    }
    expect(await help([])).toBe(top);
    const credit = await help(['help', 'wallet:credit']);
    expect(credit).toBe(await help(['wallet:credit', '--help']));
    expect(credit).toContain('Usage: npm run cli -- wallet:credit [options]');
    expect(credit).toContain('--org <id>');
    expect(credit).toContain('--currency <currency>');
    expect(credit).toContain('npm run cli -- wallet:credit --org org_demo --currency USD --amount 25.5');
    expect(await help(['seed', '--help'])).toContain('Usage: npm run cli -- seed [options] <file>');
  });
  it('on the embedded database, runs while the server holds DATA_DIR: the server runs the command on its own connection', async () => {
    if (db.url) {
      console.log('cli with a running server: the embedded engine only (PostgreSQL takes any number of clients)');
      return;
    }
    const own = tempDir('cds-cli-live-');
    const liveEnv = { DATA_DIR: join(own.path, 'data') };
    const server = await startServerProcess({ ...liveEnv, WORKER_ENABLED: 'false', DEMO_SEED: 'false', METRICS_PORT: '0', PORT: '0' });
    try {
      const socket = join(own.path, 'data', 'cli.sock');
      expect((statSync(socket).mode & 0o777).toString(8)).toBe('600');
      // A relative seed path is read from the CLI's directory, not the server's.
      const seeded = spawnSync(process.execPath, [join(ROOT, 'dist/src/cli/main.js'), 'seed', 'seed-example.json'], {
        cwd: join(ROOT, 'test/fixtures'),
        env: childEnv(liveEnv),
        encoding: 'utf8',
      });
      expect({ status: seeded.status, stderr: seeded.stderr }).toEqual({ status: 0, stderr: '' });
      expect((JSON.parse(seeded.stdout) as { regions: string[] }).regions).toEqual(['id-jkt']);
      const credit = await cli(['wallet:credit', '--org', 'org_acme', '--currency', 'USD', '--amount', '2.5'], !SPAWN, liveEnv);
      expect({ status: credit.status, stderr: credit.stderr, out: JSON.parse(credit.stdout) as unknown }).toEqual({
        status: 0,
        stderr: '',
        out: { org_id: 'org_acme', currency: 'USD', available: '102.50000', reserved: '0.00000' },
      });
      // What the server answers shows it at once: the same database.
      const wallet = await validatedFetch(`${server.url}/v1/wallet`, { headers: { Authorization: `Bearer ${EXAMPLE_TOKEN}` } });
      expect(await wallet.json()).toEqual({
        balances: [
          { currency: 'USD', available: '102.50000', reserved: '0.00000' },
          { currency: 'IDR', available: '1500000', reserved: '0' },
        ],
      });
      const unknown = await cli(['wallet:credit', '--org', 'org_nope', '--currency', 'USD', '--amount', '1'], !SPAWN, liveEnv);
      expect({ status: unknown.status, stdout: unknown.stdout, err: JSON.parse(unknown.stderr) as unknown }).toEqual({
        status: 1,
        stdout: '',
        err: { error: { code: 'not_found', message: 'Organization org_nope not found' } },
      });
      const verify = await cli(['verify'], !SPAWN, liveEnv);
      expect(verify.status).toBe(0);
      expect((JSON.parse(verify.stdout) as { ok: boolean }).ok).toBe(true);
      expect(server.output()).toContain('operator command wallet:credit: ok');
    } finally {
      expect(await server.stop()).toBe(0);
      own.remove();
    }
  });
});
