import { scaled } from '../support/deadlines';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { processHttp } from '../support/openapi-validation';
import { ROOT, childEnv, tempDir } from '../support/processes';
import { TestApp, startTestApp } from '../support/test-app';

/**
 * examples/typescript-client: three generators run on the document the running service serves,
 * and what they give type-checked with --strict: @hey-api/openapi-ts (a client),
 * openapi-typescript (types), and swagger-typescript-api, which builds the Operation and Quote
 * unions from their `discriminator` mappings (as openapi-generator's Go, Java and Python clients
 * deserialize them). In each, checking `type` types `result` without a cast. (What an integrator
 * writes is the SDK's example, run by test/e2e/sdk.e2e-spec.ts.) And the how-to's fresh project
 * (docs/how-to/generate-a-client.md, "In a fresh project, with pinned versions"), its commands and
 * first use as written, in an empty temp directory: its npm install needs the registry (its pinned
 * tarballs come from the cache npm ci filled, the packages' metadata from the registry).
 */
const HOW_TO = join(ROOT, 'docs/how-to/generate-a-client.md');

/** Why the fresh-project case cannot run here (the registry does not answer), or undefined. */
function registryUnreachable(): string | undefined {
  const r = spawnSync('npm', ['ping', '--fetch-timeout=5000', '--fetch-retries=0'], { encoding: 'utf8', timeout: 15_000 });
  return r.status === 0 ? undefined : `the npm registry does not answer (npm ping: ${(r.stderr || r.error?.message || '').trim().split('\n').pop()})`;
}
const offline = registryUnreachable();
if (offline) console.log(`example-client.e2e-spec: the fresh-project how-to skipped, ${offline}`);
const itOnline = offline ? it.skip : it;

describe('generated clients (from the served document)', () => {
  let t: TestApp;
  let base: string;
  const dir = tempDir('cds-client-');

  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen(0, '127.0.0.1');
    const address = (t.app.getHttpServer() as Server).address();
    base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  afterAll(async () => {
    await t?.close();
    dir.remove();
  });

  /** Runs a program without blocking this process. */
  const run = (args: string[], env: Record<string, string> = {}) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, args, { cwd: ROOT, env: childEnv({ PATH: process.env.PATH, ...env }) });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('close', (status) => resolve({ status, stdout, stderr }));
    });

  it('generates from /v1/openapi.json with three generators, the third reading the discriminators, and compiles with --strict', async () => {
    const served = await (await processHttp(base)).get('/v1/openapi.json');
    expect(served.status).toBe(200);
    const input = join(dir.path, 'openapi.json');
    writeFileSync(input, served.text);

    const generated = await Promise.all([
      run(['node_modules/@hey-api/openapi-ts/bin/run.js', '-f', 'examples/typescript-client/openapi-ts.config.mjs'], { OPENAPI_INPUT: input }),
      run(['node_modules/openapi-typescript/bin/cli.js', input, '-o', 'examples/typescript-client/src/generated/openapi-typescript.ts']),
      run([
        'node_modules/swagger-typescript-api/dist/cli.mjs', 'generate', '--silent', '--enum-style', 'union',
        '-p', input, '-o', 'examples/typescript-client/src/generated', '-n', 'swagger-typescript-api.ts',
      ]),
    ]);
    for (const g of generated) expect({ status: g.status, stderr: g.stderr }).toEqual({ status: 0, stderr: expect.any(String) });
    // swagger-typescript-api made each member of the unions from the discriminator's mapping.
    const second = readFileSync(join(ROOT, 'examples/typescript-client/src/generated/swagger-typescript-api.ts'), 'utf8');
    expect(second).toMatch(/export type Operation = BaseOperation &\s*\(\s*\| BaseOperationTypeMapping<"volume\.create", VolumeCreateOperation>/);
    expect(second).toContain('| BaseOperationTypeMapping<"vm.create", VmCreateOperation>');
    expect(second).toMatch(/export type Quote = BaseQuote &\s*\(\s*\| BaseQuoteKindMapping<"volume", VolumeQuote>\s*\| BaseQuoteKindMapping<"server", ServerQuote>\s*\);/);
    const compile = await run(['node_modules/typescript/bin/tsc', '-p', 'examples/typescript-client/tsconfig.json']);
    expect({ status: compile.status, out: compile.stdout }).toEqual({ status: 0, out: '' });
  }, scaled(300_000));

  itOnline('the how-to\'s fresh project, with its pinned versions, generates a client from the served document and type-checks its first use (strict)', async () => {
    const text = readFileSync(HOW_TO, 'utf8');
    const section = text.slice(text.indexOf('## In a fresh project, with pinned versions'));
    const sh = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
    const main = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
    expect({ sh: typeof sh, main: typeof main }).toEqual({ sh: 'string', main: 'string' });
    // As written, but against this test's server, and npm told to take what its cache holds first.
    const script = sh!
      .replaceAll('http://localhost:3000', base)
      .replace(/^npm i (.*)$/m, 'npm i --prefer-offline --no-audit --no-fund --loglevel=error $1');
    expect(script).toContain('npm i --prefer-offline --no-audit --no-fund --loglevel=error -D --save-exact @hey-api/openapi-ts@');
    const project = join(dir.path, 'fresh');
    mkdirSync(project);
    const shell = await new Promise<{ status: number | null; out: string }>((resolve) => {
      const child = spawn('bash', ['-euo', 'pipefail', '-c', script], { cwd: project, env: childEnv({ PATH: process.env.PATH }) });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      child.on('close', (status) => resolve({ status, out }));
    });
    expect({ status: shell.status, out: shell.status === 0 ? '' : shell.out }).toEqual({ status: 0, out: '' });
    const cd = join(project, 'cds-client');
    for (const f of ['sdk.gen.ts', 'types.gen.ts', 'client.gen.ts']) expect(readFileSync(join(cd, 'src/client', f), 'utf8').length).toBeGreaterThan(0);
    writeFileSync(join(cd, 'src/main.ts'), main!);
    const tsc = await new Promise<{ status: number | null; out: string }>((resolve) => {
      const child = spawn(process.execPath, [join(cd, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: cd });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      child.on('close', (status) => resolve({ status, out }));
    });
    // "It prints nothing."
    expect(tsc).toEqual({ status: 0, out: '' });
  }, scaled(180_000));
});
