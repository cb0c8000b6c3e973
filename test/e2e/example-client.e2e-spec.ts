import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
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
 * writes is the SDK's example, run by test/e2e/sdk.e2e-spec.ts.)
 */
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
  }, 300_000);
});
