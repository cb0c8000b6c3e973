import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { load } from 'js-yaml';

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
    expect(compose).toMatch(/\n {4}DEMO_SEED: "false"\n/);
    expect(compose).toContain('POSTGRES_PASSWORD: ${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD');
    expect(compose).toContain('DATABASE_URL: postgresql://cds:${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD');
    expect(compose).toContain('REDIS_URL: redis://redis:6379');
    expect(compose).toContain('image: postgres:15');
  });

  it("states the engines of package.json in the Dockerfile's comment", () => {
    const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
    expect(dockerfile).toContain(`package.json engines: ${engines}`);
  });
});

/** Replaces ${VAR}, ${VAR:-default} and ${VAR:?message} as Compose does; a missing required VAR throws its message. */
function interpolate(text: string, env: Record<string, string>): string {
  return text.replace(/\$\{([A-Z0-9_]+)(?::([?-])([^}]*))?\}/g, (_m, name: string, op?: string, arg?: string) => {
    const value = env[name];
    if (value !== undefined && value !== '') return value;
    if (op === '?') throw new Error(`required variable ${name} is missing a value: ${arg}`);
    return op === '-' ? (arg ?? '') : '';
  });
}

const REQUIRED = ['POSTGRES_PASSWORD', 'IDEMPOTENCY_SECRET', 'WEBHOOK_SECRETS_KEY', 'DEPLOYMENT_SECRETS_KEY', 'SITE_ADDRESS'];
const ENV: Record<string, string> = Object.fromEntries(REQUIRED.map((name) => [name, name === 'SITE_ADDRESS' ? 'cloud.example.com' : `${name.toLowerCase()}-0123456789abcdef0123456789abcdef`]));
const dockerCompose = spawnSync('docker', ['compose', 'version'], { encoding: 'utf8', timeout: 20_000 }).status === 0;

/**
 * docs/how-to/deploy-with-compose.md's deployment: `docker compose config` where Docker's compose
 * plugin runs; otherwise the file is read with js-yaml and interpolated as Compose does.
 */
describe('docker/compose.yaml: the deployment of docs/how-to/deploy-with-compose.md', () => {
  const raw = read('docker/compose.yaml');
  type Service = {
    image?: string; build?: unknown; command?: string[]; environment?: Record<string, string>; ports?: string[]; expose?: string[];
    depends_on?: Record<string, { condition: string }> | string[]; deploy?: { replicas?: number | string }; volumes?: string[];
  };
  const file = () => load(interpolate(raw, ENV)) as { services: Record<string, Service> };

  it('demands every required secret and the site address with a message, before anything starts', () => {
    for (const name of REQUIRED) {
      expect(raw).toMatch(new RegExp(`\\$\\{${name}:\\?set ${name} \\(`));
      const without = { ...ENV, [name]: '' };
      expect(() => interpolate(raw, without)).toThrow(`required variable ${name} is missing a value: set ${name} (`);
      if (dockerCompose) {
        const run = spawnSync('docker', ['compose', '-f', join(ROOT, 'docker/compose.yaml'), 'config', '--quiet'], { encoding: 'utf8', env: { ...process.env, ...without }, timeout: 60_000 });
        expect({ name, status: run.status, stderr: run.stderr.includes(`set ${name}`) }).toEqual({ name, status: 1, stderr: true });
      }
    }
    if (dockerCompose) {
      const run = spawnSync('docker', ['compose', '-f', join(ROOT, 'docker/compose.yaml'), 'config', '--quiet'], { encoding: 'utf8', env: { ...process.env, ...ENV }, timeout: 60_000 });
      expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
    }
  });

  it('runs the migrations once, then several API replicas with PUBLIC_BASE_URL, every secret and metrics on the compose network, no port of their own', () => {
    const { services } = file();
    expect(Object.keys(services).sort()).toEqual(['app', 'caddy', 'migrate', 'postgres', 'prometheus', 'redis']);
    const app = services.app;
    expect(Number(app.deploy?.replicas)).toBeGreaterThanOrEqual(2);
    expect(app.ports).toBeUndefined();
    expect(app.environment).toMatchObject({
      PUBLIC_BASE_URL: 'https://cloud.example.com',
      IDEMPOTENCY_SECRET: ENV.IDEMPOTENCY_SECRET,
      WEBHOOK_SECRETS_KEY: ENV.WEBHOOK_SECRETS_KEY,
      DEPLOYMENT_SECRETS_KEY: ENV.DEPLOYMENT_SECRETS_KEY,
      DATABASE_URL: `postgresql://cds:${ENV.POSTGRES_PASSWORD}@postgres:5432/cds`,
      METRICS_HOST: '0.0.0.0',
      METRICS_PORT: '9464',
      TRUST_PROXY: '1',
      MIGRATIONS_RUN: 'false',
      DEMO_SEED: 'false',
    });
    expect(app.depends_on).toMatchObject({ migrate: { condition: 'service_completed_successfully' }, postgres: { condition: 'service_healthy' } });
    expect(services.migrate.command).toEqual(['node', 'dist/src/cli/main.js', 'migrate']);
    expect(services.migrate.environment).toMatchObject({ DATABASE_URL: app.environment!.DATABASE_URL, IDEMPOTENCY_SECRET: ENV.IDEMPOTENCY_SECRET });
    // Every variable the file sets is a setting the service reads.
    const settings = read('src/shared/config/settings.ts');
    for (const name of Object.keys(app.environment!)) expect({ name, read: settings.includes(`'${name}'`) || settings.includes(`env.${name}`) }).toEqual({ name, read: true });
    // Only Caddy (80, 443) and Prometheus's UI on loopback are published.
    const published = Object.entries(services).flatMap(([name, s]) => (s.ports ?? []).map((p) => `${name} ${p}`));
    expect(published.sort()).toEqual(['caddy 443:443', 'caddy 443:443/udp', 'caddy 80:80', 'prometheus 127.0.0.1:9090:9090']);
  });

  it('puts Caddy with TLS for SITE_ADDRESS in front of every replica, and a Prometheus that scrapes every replica', () => {
    const { services } = file();
    expect(services.caddy.image).toMatch(/^caddy:2/);
    expect(services.caddy.environment).toEqual({ SITE_ADDRESS: 'cloud.example.com' });
    expect(services.caddy.volumes).toContain('./Caddyfile:/etc/caddy/Caddyfile:ro');
    const caddyfile = read('docker/Caddyfile');
    expect(caddyfile).toMatch(/^\{\$SITE_ADDRESS\} \{$/m);
    expect(caddyfile).toMatch(/dynamic a \{\s+name app\s+port 3000\s/);
    expect(caddyfile).toContain('health_uri /v1/ready');
    expect(services.prometheus.volumes).toContain('./prometheus.yml:/etc/prometheus/prometheus.yml:ro');
    const prometheus = load(read('docker/prometheus.yml')) as { scrape_configs: { dns_sd_configs: { names: string[]; type: string; port: number }[] }[] };
    expect(prometheus.scrape_configs[0].dns_sd_configs).toEqual([{ names: ['app'], type: 'A', port: 9464, refresh_interval: '30s' }]);
  });

  it('is what the how-to runs: its command names every required variable, and it names the services', () => {
    const howTo = read('docs/how-to/deploy-with-compose.md');
    for (const name of REQUIRED) expect({ name, named: howTo.includes(name) }).toEqual({ name, named: true });
    expect(howTo).toContain('docker compose -f docker/compose.yaml up --build -d');
    for (const service of ['caddy', 'prometheus', 'migrate']) expect(howTo).toContain(`\`${service}\``);
  });
});
