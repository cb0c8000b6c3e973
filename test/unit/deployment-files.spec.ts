import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';

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
    expect(compose).toContain('image: postgres:15');
  });

  it('runs 3 API replicas behind the proxy (HAProxy checking /v1/ready), 2 workers, and the migrations once before them', () => {
    type Service = { image?: string; command?: string[]; environment?: Record<string, string>; deploy?: { replicas?: number }; ports?: string[]; depends_on?: Record<string, { condition: string }> | string[] };
    const services = (yaml.load(compose) as { services: Record<string, Service> }).services;
    const { app, worker, migrate, proxy } = services;
    expect(app.deploy?.replicas).toBe(3);
    expect(app.ports).toBeUndefined(); // replicas publish nothing: the proxy does
    expect(app.environment).toMatchObject({ WORKER_ENABLED: 'false', MIGRATIONS_RUN: 'false', TRUST_PROXY: '1', DEMO_SEED: 'false' });
    expect(worker.deploy?.replicas).toBe(2);
    expect(worker.environment).toMatchObject({ WORKER_ENABLED: 'true', MIGRATIONS_RUN: 'false' });
    expect(migrate.command).toEqual(['node', 'dist/src/cli/main.js', 'migrate']);
    for (const s of [app, worker]) {
      expect(s.image).toBe(migrate.image);
      expect(s.environment?.DATABASE_URL).toBe(migrate.environment?.DATABASE_URL);
      expect((s.depends_on as Record<string, { condition: string }>).migrate).toEqual({ condition: 'service_completed_successfully' });
    }
    expect(proxy.ports).toEqual(['3000:80']);
    const haproxy = read('docker/haproxy.cfg');
    expect(haproxy).toContain('\n  bind :80\n');
    expect(haproxy).toContain('\n  option httpchk GET /v1/ready\n  http-check expect status 200\n');
    expect(haproxy).toMatch(/\n {2}server-template app (\d+) app:3000 check resolvers docker init-addr none\n/);
    expect(Number(/server-template app (\d+)/.exec(haproxy)![1])).toBeGreaterThanOrEqual(app.deploy!.replicas!);
  });
});
