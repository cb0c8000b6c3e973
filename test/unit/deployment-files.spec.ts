import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '../..');
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');
/**
 * The V8 settings of the server (README, Benchmarks and memory): the heap settings under load and
 * the embedded engine's WebAssembly compiled by Liftoff only; the same in npm start, the image and the bench.
 */
const HEAP_FLAGS = ['--max-semi-space-size=32', '--heap-growing-percent=30', '--liftoff-only'];

/** docker/ cannot be built here (no Docker engine): these checks keep it consistent with the code. */
describe('docker/Dockerfile and docker/compose.yaml', () => {
  const dockerfile = read('docker/Dockerfile');
  const compose = read('docker/compose.yaml');
  const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;

  it('runs the built server as npm start does, as a non-root user, with the demo seed file and the embedded template present', () => {
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(runtime).toContain(`\nCMD ${JSON.stringify(['node', ...HEAP_FLAGS, 'dist/src/main']).replace(/","/g, '", "')}\n`);
    expect(scripts.start).toBe(`node ${HEAP_FLAGS.join(' ')} dist/src/main.js`);
    expect(scripts['start:prod']).toBe(`node ${HEAP_FLAGS.join(' ')} dist/src/main`);
    expect(runtime).toMatch(/\nUSER node\n/);
    expect(runtime).toContain('COPY --chown=node:node seeds ./seeds');
    expect(runtime).toContain('COPY --chown=node:node embedded ./embedded');
    expect(runtime).toContain('COPY --from=build --chown=node:node /app/dist ./dist');
  });

  it('runs the image with NODE_ENV=production, so the demo seed is off unless DEMO_SEED=true (issue 9)', () => {
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(runtime).toMatch(/\nENV NODE_ENV=production /);
    expect(runtime).not.toMatch(/DEMO_SEED/);
  });

  it('deploys without the demo data (its owner password is public) and with no password in the file', () => {
    expect(compose).toMatch(/\n {6}DEMO_SEED: "false"\n/);
    expect(compose).toContain('POSTGRES_PASSWORD: ${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}');
    expect(compose).toContain('DATABASE_URL: postgresql://cds:${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}@postgres:5432/cds');
    expect(compose).toContain('REDIS_URL: redis://redis:6379');
    expect(compose).toContain('IDEMPOTENCY_SECRET: ${IDEMPOTENCY_SECRET:?set IDEMPOTENCY_SECRET}');
    // The image runs under NODE_ENV=production, which refuses to start without the three server secrets.
    expect(compose).toContain('WEBHOOK_SECRETS_KEY: ${WEBHOOK_SECRETS_KEY:?set WEBHOOK_SECRETS_KEY}');
    expect(compose).toContain('DEPLOYMENT_SECRETS_KEY: ${DEPLOYMENT_SECRETS_KEY:?set DEPLOYMENT_SECRETS_KEY}');
    expect(compose).toContain('image: postgres:15');
  });
});
