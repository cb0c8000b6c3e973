/**
 * Documentation that cannot go stale: the shell examples of the README's quickstart and of the
 * tutorial (fenced blocks marked `sh tested`) run against a server with the demo data, step by
 * step, and must succeed; no relative link of README.md, CHANGELOG.md or docs/ leads nowhere; the
 * error-code page is the one the OpenAPI document renders; the docs carry no history.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TestDatabase, createTestDatabase } from '../support/database';
import { TestedBlock, deadLinks, markdownFiles, renderErrorCodes, testedBlocks } from '../support/docs';
import { OpenApiDoc, validatedFetch } from '../support/openapi-validation';
import { ROOT, ServerProcess, childEnv, ensureBuilt, startServerProcess, tempDir } from '../support/processes';

jest.setTimeout(120_000);

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the blocks as one bash script (`set -euo pipefail`), a marker echoed after each block. */
function runBlocks(blocks: TestedBlock[], env: Record<string, string | undefined>): Promise<Run> {
  const script = ['set -euo pipefail', ...blocks.map((b) => `${b.code}\necho "::ok ${b.file}:${b.line}"`)].join('\n');
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], { cwd: ROOT, env: childEnv(env) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function expectEveryBlockRan(run: Run, blocks: TestedBlock[]): void {
  const ran = [...run.stdout.matchAll(/^::ok (\S+)$/gm)].map((m) => m[1]);
  if (run.code !== 0 || ran.length !== blocks.length) {
    throw new Error(`exit ${run.code}; blocks that ran: ${ran.join(', ') || 'none'}\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`);
  }
  expect(ran).toEqual(blocks.map((b) => `${b.file}:${b.line}`));
}

describe('docs: links, history, generated pages', () => {
  const files = markdownFiles(ROOT);

  it('finds the README, the changelog and the docs tree', () => {
    expect(files).toEqual(expect.arrayContaining(['README.md', 'CHANGELOG.md', 'docs/README.md', 'docs/tutorials/first-disk.md']));
  });

  it('has no dead relative link, no #anchor without its heading, no link outside the repository', () => {
    expect(deadLinks(ROOT, files)).toEqual([]);
  });

  it('names no issue, no path outside the repository', () => {
    const found = files
      .flatMap((f) => readFileSync(join(ROOT, f), 'utf8').split('\n').map((line, i) => ({ where: `${f}:${i + 1}`, line })))
      .filter(({ line }) => /shared\/|issue [0-9]/.test(line));
    expect(found).toEqual([]);
  });

  it('lists every reference and explanation page in docs/README.md', () => {
    const index = readFileSync(join(ROOT, 'docs/README.md'), 'utf8');
    const pages = files.filter((f) => /^docs\/(reference|explanation|how-to|tutorials)\//.test(f)).map((f) => f.slice('docs/'.length));
    expect(pages.filter((p) => !index.includes(`](${p})`))).toEqual([]);
  });

  it('keeps the README short', () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').length).toBeLessThanOrEqual(200);
  });
});

describe('docs: examples run against a server with the demo data', () => {
  // The built server as `npm start` runs it (demo data on, the worker on), on a temporary embedded
  // DATA_DIR or a fresh PostgreSQL schema; the operator CLI reaches the same database (through the
  // server on the embedded engine). What the examples leave behind is read back over HTTP.
  let db: TestDatabase;
  let dir: ReturnType<typeof tempDir>;
  let env: Record<string, string | undefined>;
  let server: ServerProcess;
  let base: string;
  let demoKey: string;
  let document: OpenApiDoc;

  beforeAll(async () => {
    ensureBuilt();
    db = await createTestDatabase();
    dir = tempDir('cds-docs-');
    env = db.url ? { DATABASE_URL: db.url } : { DATA_DIR: join(dir.path, 'data') };
    server = await startServerProcess({ ...env, DEMO_SEED: 'true', WORKER_ENABLED: 'true', WORKER_INTERVAL_MS: '100' });
    base = server.url;
    for (let i = 0; i < 50 && !/Bearer (cds_live_\w+)/.test(server.output()); i++) await new Promise((r) => setTimeout(r, 100));
    demoKey = /Bearer (cds_live_\w+)/.exec(server.output())![1];
    document = (await (await fetch(`${base}/v1/openapi.json`)).json()) as OpenApiDoc;
  });
  afterAll(async () => {
    if (server) expect(await server.stop()).toBe(0);
    await db?.drop();
    dir?.remove();
  });

  const get = async (path: string, token: string): Promise<Record<string, unknown>> => {
    const res = await validatedFetch(`${base}${path}`, { headers: { Authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    return (await res.json()) as Record<string, unknown>;
  };

  it('renders docs/reference/error-codes.md from the OpenAPI document', () => {
    const path = join(ROOT, 'docs/reference/error-codes.md');
    const rendered = renderErrorCodes(document as never);
    if (process.env.UPDATE_DOCS === '1') writeFileSync(path, rendered);
    expect(readFileSync(path, 'utf8')).toBe(rendered);
  });

  it('README quickstart: five requests from the demo key to a disk attached to web-1, charged once', async () => {
    const blocks = testedBlocks(ROOT, 'README.md');
    expect(blocks).toHaveLength(5);
    const run = await runBlocks(blocks, { BASE: base, KEY: demoKey });
    expectEveryBlockRan(run, blocks);
    const { volumes } = (await get('/v1/volumes?name=quickstart', demoKey)) as { volumes: Record<string, unknown>[] };
    expect(volumes).toEqual([
      expect.objectContaining({ name: 'quickstart', status: 'attached', size_gb: 50, server: { id: 'vm_demoweb1', name: 'web-1' }, mounted: true }),
    ]);
    // 50 GB × 0.02000 USD × 1 month = 1.00000 USD out of the seeded 100.
    expect(await get('/v1/wallet', demoKey)).toEqual({
      balances: [
        { currency: 'USD', available: '99.00000', reserved: '0.00000' },
        { currency: 'IDR', available: '1500000', reserved: '0' },
      ],
    });
  });

  it('tutorial: sign-up, API key, quote, funding by the operator, a disk bought at the quoted price', async () => {
    const blocks = testedBlocks(ROOT, 'docs/tutorials/first-disk.md');
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    const run = await runBlocks(blocks, { BASE: base, ...env });
    expectEveryBlockRan(run, blocks);
    const login = await fetch(`${base}/v1/auth/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: 'ada@example.com', password: 'a long password' }),
    });
    const session = ((await login.json()) as { token: string }).token;
    const { volumes } = (await get('/v1/volumes', session)) as { volumes: Record<string, unknown>[] };
    expect(volumes).toEqual([expect.objectContaining({ name: 'data-1', status: 'available', size_gb: 50, server: null })]);
    // Credited 10 USD, charged the quote: 50 GB × 0.02000 USD × 1 month.
    expect(await get('/v1/wallet', session)).toEqual({
      balances: [
        { currency: 'USD', available: '9.00000', reserved: '0.00000' },
        { currency: 'IDR', available: '0', reserved: '0' },
      ],
    });
  });

  it('tutorial: a top-up paid on the checkout page, a server bought, a disk attached to it, both deleted, charged once each', async () => {
    const blocks = testedBlocks(ROOT, 'docs/tutorials/first-server.md');
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    const run = await runBlocks(blocks, { BASE: base, ...env });
    expectEveryBlockRan(run, blocks);
    const login = await fetch(`${base}/v1/auth/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: 'grace@example.com', password: 'another long password' }),
    });
    const session = ((await login.json()) as { token: string }).token;
    const { servers } = (await get('/v1/servers?status=deleted', session)) as { servers: Record<string, unknown>[] };
    expect(servers).toEqual([expect.objectContaining({ name: 'app-1', status: 'deleted', plan: 'cx1', ipv4: null, volume_ids: [] })]);
    const { volumes } = (await get('/v1/volumes?status=deleted', session)) as { volumes: Record<string, unknown>[] };
    expect(volumes).toEqual([expect.objectContaining({ name: 'app-data', status: 'deleted', size_gb: 50, server: null })]);
    const { top_ups: topUps } = (await get('/v1/wallet/top-ups', session)) as { top_ups: Record<string, unknown>[] };
    expect(topUps).toEqual([expect.objectContaining({ status: 'succeeded', amount: '25.00000', currency: 'USD', checkout_url: null })]);
    // 25.00000 paid in; the server 4.50000 USD × 1 month and the disk 50 GB × 0.02000 USD × 1 month charged once each; no refund.
    expect(await get('/v1/wallet', session)).toEqual({
      balances: [
        { currency: 'USD', available: '19.50000', reserved: '0.00000' },
        { currency: 'IDR', available: '0', reserved: '0' },
      ],
    });
  });

  it('every request body example of the OpenAPI document works under "Try it out" on the demo data', async () => {
    type Op = { parameters?: { in: string; name: string; example?: string }[]; requestBody?: { content: Record<string, { examples?: Record<string, { value: unknown }> }> } };
    const tried: string[] = [];
    for (const [path, item] of Object.entries(document.paths as unknown as Record<string, Record<string, Op>>)) {
      for (const [method, op] of Object.entries(item)) {
        const examples = op.requestBody?.content['application/json']?.examples ?? {};
        for (const [name, example] of Object.entries(examples)) {
          const url = path.replace(/\{(\w+)\}/g, (_, p: string) => op.parameters?.find((x) => x.in === 'path' && x.name === p)?.example ?? p);
          const res = await validatedFetch(base + url, {
            method: method.toUpperCase(),
            headers: { Authorization: `Bearer ${demoKey}`, 'Content-Type': 'application/json' },
            body: JSON.stringify(example.value),
          });
          tried.push(`${method.toUpperCase()} ${path} ${name} ${res.status}`);
          expect({ example: `${method} ${path} ${name}`, status: res.status < 300 ? 'success' : res.status, body: res.status < 300 ? undefined : await res.text() }).toEqual({
            example: `${method} ${path} ${name}`,
            status: 'success',
            body: undefined,
          });
        }
      }
    }
    expect(tried).toEqual(['POST /v1/volumes attached 202', 'POST /v1/volumes detached 202', 'POST /v1/servers minimal 202']);
  });
});
