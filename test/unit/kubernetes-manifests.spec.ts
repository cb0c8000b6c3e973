import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PATH_METADATA, METHOD_METADATA } from '@nestjs/common/constants';
import { RequestMethod } from '@nestjs/common';
import yaml from 'js-yaml';
import { HealthController } from '../../src/modules/monitoring/interface/http/health.controller';
import { loadSettings } from '../../src/shared/config/settings';
import { ROOT } from '../support/processes';

/**
 * deploy/kubernetes (kustomize) read as files, no cluster: every resource listed parses; the
 * ports are the ones the image and the settings use; the probes are GET routes of the app's
 * public HealthController; every setting a production process needs is given, secrets only by
 * reference to the Secret cds-secrets; every variable named is a documented setting; the
 * settings they add up to load; the Service, PodDisruptionBudget and autoscaler select the API.
 */
type Doc = Record<string, any>;

const DIR = join(ROOT, 'deploy/kubernetes');
const read = (file: string): Doc => yaml.load(readFileSync(join(DIR, file), 'utf8')) as Doc;

/** Settings a production process (API or worker) must be given. */
const REQUIRED = ['NODE_ENV', 'DATABASE_URL', 'DATABASE_POOL_MODE', 'DATABASE_DIRECT_URL', 'REDIS_URL', 'IDEMPOTENCY_SECRET', 'WEBHOOK_SECRETS_KEY', 'DEPLOYMENT_SECRETS_KEY', 'DEMO_SEED', 'MIGRATIONS_RUN', 'TRUST_PROXY', 'PUBLIC_BASE_URL', 'WORKER_ENABLED', 'PORT', 'HOST'];
/** Settings that are secrets (or hold a password): only ever from the Secret. */
const SECRETS = ['DATABASE_URL', 'DATABASE_DIRECT_URL', 'REDIS_URL', 'IDEMPOTENCY_SECRET', 'WEBHOOK_SECRETS_KEY', 'DEPLOYMENT_SECRETS_KEY', 'STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET', 'AGENT_SECRET'];

describe('Kubernetes manifests (deploy/kubernetes) against the app', () => {
  const kustomization = read('kustomization.yaml');
  const resources: Doc[] = (kustomization.resources as string[]).map(read);
  const byKind = (kind: string, name?: string): Doc[] => resources.filter((r) => r.kind === kind && (name === undefined || r.metadata.name === name));
  const one = (kind: string, name: string): Doc => {
    const found = byKind(kind, name);
    expect(found).toHaveLength(1);
    return found[0];
  };
  const configMap = one('ConfigMap', 'cds-settings');
  const api = one('Deployment', 'cds-api');
  const worker = one('Deployment', 'cds-worker');
  const job = one('Job', 'cds-migrate');
  const settingsDoc = readFileSync(join(ROOT, 'docs/reference/settings.md'), 'utf8');

  /** The environment a container sees: the ConfigMap it loads, then its own env (secrets replaced by a placeholder of 48 characters, URLs by a URL). */
  const environment = (container: Doc): Record<string, string> => {
    const env: Record<string, string> = {};
    for (const from of container.envFrom ?? []) {
      expect(from.configMapRef?.name).toBe('cds-settings');
      Object.assign(env, configMap.data);
    }
    for (const e of container.env ?? []) {
      const ref = e.valueFrom?.secretKeyRef;
      if (ref) {
        expect(ref.name).toBe('cds-secrets');
        env[e.name] = /URL$/.test(e.name) ? (e.name === 'REDIS_URL' ? 'redis://redis:6379' : `postgresql://cds:pw@db:5432/cds`) : 'x'.repeat(48);
      } else {
        expect(typeof e.value).toBe('string');
        env[e.name] = e.value;
      }
    }
    return env;
  };
  const container = (d: Doc): Doc => {
    expect(d.spec.template.spec.containers).toHaveLength(1);
    return d.spec.template.spec.containers[0];
  };

  it('lists only files that exist and parse, with no Secret among them (secrets are created outside the repository)', () => {
    for (const file of kustomization.resources as string[]) expect(existsSync(join(DIR, file))).toBe(true);
    expect(resources.map((r) => r.kind).sort()).toEqual(['ConfigMap', 'Deployment', 'Deployment', 'HorizontalPodAutoscaler', 'Job', 'Namespace', 'PodDisruptionBudget', 'Service']);
    expect(byKind('Secret')).toEqual([]);
  });

  it('ports: the HTTP port of the settings and the image, the metrics port; the Service targets the named HTTP port', () => {
    const dockerfile = readFileSync(join(ROOT, 'docker/Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/^EXPOSE 3000 9464$/m);
    for (const d of [api, worker]) {
      const c = container(d);
      const env = environment(c);
      expect(c.ports).toEqual([
        { name: 'http', containerPort: Number(env.PORT) },
        { name: 'metrics', containerPort: Number(env.METRICS_PORT) },
      ]);
      expect([env.PORT, env.METRICS_PORT, env.HOST, env.METRICS_HOST]).toEqual(['3000', '9464', '0.0.0.0', '0.0.0.0']);
    }
    const service = one('Service', 'cds-api');
    expect(service.spec.ports).toEqual([{ name: 'http', port: 80, targetPort: 'http' }]);
  });

  it('probes: readiness GET /v1/ready and liveness GET /v1/health, routes of the public HealthController', () => {
    const prefix = Reflect.getMetadata(PATH_METADATA, HealthController) as string;
    const routes = ['health', 'ready'].map((method) => {
      const handler = (HealthController.prototype as unknown as Record<string, object>)[method];
      expect(Reflect.getMetadata(METHOD_METADATA, handler)).toBe(RequestMethod.GET);
      return `/${prefix}/${Reflect.getMetadata(PATH_METADATA, handler) as string}`;
    });
    expect(routes).toEqual(['/v1/health', '/v1/ready']);
    for (const d of [api, worker]) {
      const c = container(d);
      expect(c.readinessProbe.httpGet).toEqual({ path: '/v1/ready', port: 'http' });
      expect(c.livenessProbe.httpGet).toEqual({ path: '/v1/health', port: 'http' });
    }
  });

  it('every required production setting is given to the API and the worker; secrets by reference only; every variable is a documented setting; they load', () => {
    for (const [d, workerEnabled] of [
      [api, false],
      [worker, true],
    ] as const) {
      const c = container(d);
      const env = environment(c);
      expect(REQUIRED.filter((name) => !(name in env))).toEqual([]);
      for (const e of c.env) if (SECRETS.includes(e.name)) expect({ name: e.name, value: e.value, ref: e.valueFrom?.secretKeyRef?.key }).toEqual({ name: e.name, value: undefined, ref: e.name });
      for (const name of Object.keys(env)) expect({ name, documented: name === 'NODE_ENV' || settingsDoc.includes(`| \`${name}\` |`) }).toEqual({ name, documented: true });
      const settings = loadSettings(env);
      expect(settings).toMatchObject({ workerEnabled, migrationsRun: false, demoSeed: false, dbPoolMode: 'transaction', port: 3000, trustProxy: 1 });
      expect(settings.databaseDirectUrl).toBeDefined();
    }
    for (const name of SECRETS) expect(Object.keys(configMap.data)).not.toContain(name);
  });

  it('the migrations Job runs `cli migrate` on the direct connection (one transaction, no pooler)', () => {
    const c = container(job);
    expect(c.command).toEqual(['node', 'dist/src/cli/main.js', 'migrate']);
    const env = environment(c);
    expect(c.env.find((e: Doc) => e.name === 'DATABASE_URL').valueFrom.secretKeyRef).toEqual({ name: 'cds-secrets', key: 'DATABASE_DIRECT_URL' });
    expect(loadSettings(env).dbPoolMode).toBe('direct');
    expect(job.spec.template.spec.restartPolicy).toBe('OnFailure');
  });

  it('the Service, the PodDisruptionBudget and the autoscaler select the API pods, never the workers', () => {
    const apiLabels = api.spec.template.metadata.labels;
    const workerLabels = worker.spec.template.metadata.labels;
    const selects = (selector: Record<string, string>, labels: Record<string, string>) => Object.entries(selector).every(([k, v]) => labels[k] === v);
    expect(selects(api.spec.selector.matchLabels, apiLabels)).toBe(true);
    expect(selects(worker.spec.selector.matchLabels, workerLabels)).toBe(true);
    for (const selector of [one('Service', 'cds-api').spec.selector, one('PodDisruptionBudget', 'cds-api').spec.selector.matchLabels]) {
      expect([selects(selector, apiLabels), selects(selector, workerLabels)]).toEqual([true, false]);
    }
    const hpa = one('HorizontalPodAutoscaler', 'cds-api');
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'cds-api' });
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
    expect(hpa.spec.minReplicas).toBeLessThanOrEqual(hpa.spec.maxReplicas);
    expect(one('PodDisruptionBudget', 'cds-api').spec.maxUnavailable).toBe(1);
  });
});
