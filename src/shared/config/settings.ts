import { isIP } from 'node:net';

/**
 * Every setting of decisions.md "Settings", read once from the environment and checked.
 * The abstract class is the DI token; the interface merged into it gives the fields.
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export abstract class Settings {}
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export interface Settings {
  port: number;
  databaseUrl: string | undefined;
  /**
   * How DATABASE_URL reaches PostgreSQL: `direct` (a server or a session-mode pooler: named
   * prepared statements, LISTEN on DATABASE_URL) or `transaction` (a pooler in transaction mode
   * such as PgBouncer: no session state through it, LISTEN only on DATABASE_DIRECT_URL).
   */
  dbPoolMode: 'direct' | 'transaction';
  /** A connection straight to the primary, past the pooler, for LISTEN; unset in transaction mode: workers and long-polls poll. */
  databaseDirectUrl: string | undefined;
  dataDir: string;
  /**
   * A gzipped data directory (EmbeddedPostgres.dump) that the in-memory engine (DATA_DIR
   * memory://) starts from instead of the empty template. Not read from the environment: the
   * tests set it, to start each app from one image migrated once per run.
   */
  memoryImage?: string;
  redisUrl: string | undefined;
  /** Prefix of every Redis key this service writes (several deployments or test runs can share one Redis). */
  redisKeyPrefix: string;
  rateLimitPerMinute: number;
  /** The admin API's own listener (admin.md): 0 = off (the default); the public port answers /admin/ paths 404. */
  adminPort: number;
  /** Interface the admin listener binds to: loopback by default. */
  adminHost: string;
  /** Requests a minute per staff token on the admin listener. */
  adminRateLimitPerMinute: number;
  /** Invalid bearer tokens one client address may present a minute; the next ones are answered 429. */
  authFailuresPerMinute: number;
  workerIntervalMs: number;
  workerEnabled: boolean;
  /** How long a worker holds a claimed operation; after that another process may take it over. */
  workerLeaseMs: number;
  logLevel: string;
  migrationsRun: boolean;
  /** Seed the demo data into an empty database at start (default true unless NODE_ENV is production or test). */
  demoSeed: boolean;
  dbPoolSize: number;
  metricsPort: number;
  /** Interface the metrics endpoint listens on: loopback by default (a scraper on the same host or through a sidecar); METRICS_HOST=0.0.0.0 opens it. */
  metricsHost: string;
  /** How long the database gauges of a scrape (one statement) are reused by the next scrapes. */
  metricsGaugeCacheMs: number;
  /** Interface the API listens on. */
  host: string;
  /** How long a graceful shutdown waits for requests in flight before closing their connections. */
  /** How long the HTTP server keeps an idle kept-alive connection open (above a load balancer's idle timeout, so it never closes one the balancer is about to reuse). */
  httpKeepAliveTimeoutMs: number;
  shutdownTimeoutMs: number;
  /**
   * Express 'trust proxy': false (default: the socket's address is the client), a number of proxy
   * hops, or the proxies' addresses; then the client IP comes from X-Forwarded-For.
   */
  trustProxy: TrustProxy;
  /** Operations one worker process executes at once (each on a database connection of the worker's own pool). */
  workerConcurrency: number;
  /** PostgreSQL statement_timeout of every connection; the client gives up on a query (and drops its connection) 2 s after it. */
  dbStatementTimeoutMs: number;
  /** How long opening a database connection may take. */
  dbConnectTimeoutMs: number;
  /** PostgreSQL idle_in_transaction_session_timeout: a transaction whose client went silent is ended by the server. */
  dbIdleInTransactionTimeoutMs: number;
  /**
   * Server-side secret salting the key that encrypts stored idempotent answers holding a secret
   * (a new API key's token). Never logged. Unset: a public salt (README "Idempotency-Key").
   */
  idempotencySecret: string | undefined;
  /** The simulated storage provider: how long each call waits (to make steps observable). */
  providerLatencyMs: number;
  /** The simulated storage provider: the rate (0–1) of calls failing at random with provider_unavailable; 0 is off. */
  providerFaults: number;
  /** The simulated storage provider: every call fails with provider_unavailable. */
  providerDown: boolean;
  /** How long a step keeps being retried after provider_unavailable (from its first failed call) before the operation fails. */
  providerRetryWindowMs: number;
  /** The first retry delay of a step after provider_unavailable; doubled at each failure, capped at 60 s. */
  providerRetryBaseMs: number;
  /** How often each worker process sweeps the storage provider for disks of deleted volumes and copies of deleted snapshots (the orphan disk and snapshot sweeps). */
  orphanDiskSweepIntervalMs: number;
  /** How often each worker process sweeps the compute provider for instances of deleted or unknown servers and copies of deleted server images (the orphan instance and image sweeps). */
  orphanInstanceSweepIntervalMs: number;
  /** The simulated compute provider: the images whose guests ignore an ACPI shutdown (a stop without force then fails with invalid_state). */
  simulatedAcpiIgnoredImages: string[];
  /** terms.md: how long a suspended server is kept (renewable) before it is released. */
  serverRetentionS: number;
  /** terms.md: how long a suspended volume is kept (renewable) before it is released. */
  volumeRetentionS: number;
  /** Reserved addresses: how long a released address stays out of its pool before it is handed out again. */
  ipCooldownS: number;
  /** terms.md: how often each worker process runs the term sweeps (notices, suspension, release). */
  termSweepMs: number;
  /** terms.md: after a round of the term sweep that left work due, the rest it takes, in percent of that round's time. */
  termSweepPausePct: number;
  /** terms.md: the offsets (seconds before expires_at) of the expiry notices, largest first. */
  expiryNoticesS: number[];
  /** terms.md: how long before expires_at an automatic renewal is attempted. */
  autoRenewLeadS: number;
  /** terms.md: how long after an automatic renewal the wallet could not pay the next attempt comes (sooner when the wallet is credited). */
  autoRenewRetryS: number;
  /** Event webhooks: the secret the endpoints' signing secrets are sealed under (HKDF-SHA256 of it); unset, a public constant. Never logged. */
  webhookSecretsKey: string | undefined;
  /** Template deployments: the secret their secret variables are sealed under (HKDF-SHA256 of it); unset, a public constant. Never logged. */
  deploymentSecretsKey: string | undefined;
  /** How long the previous signing secret also signs after a rotation (seconds). */
  webhookSecretOverlapS: number;
  /** Webhook deliveries one process attempts at once. */
  webhookConcurrency: number;
  /** Webhook deliveries of one organization in flight at once, every process together: its share of the slots. */
  webhookConcurrencyPerOrganization: number;
  /** How long an attempt waits for the receiver's answer. */
  webhookTimeoutMs: number;
  /** The delay before each attempt of a delivery, in seconds (the first is 0: at once); its length is the number of attempts. */
  webhookRetryScheduleS: number[];
  /** A failure this long (seconds) after an endpoint's failing_since disables it (reason failing). */
  webhookDisableAfterS: number;
  /** Tests and local use: webhook URLs may be http and reach any address (private, loopback). */
  webhookAllowPrivateUrls: boolean;
  /**
   * The payment provider of wallet top-ups: the simulated hosted checkout (refused under
   * NODE_ENV=production), Stripe Checkout, or off (top-ups 503; the default under NODE_ENV=production).
   */
  paymentProvider: 'simulated' | 'stripe' | 'off';
  /** The simulated payment provider: every call, page and event fails (funding_unavailable, 503). */
  paymentProviderDown: boolean;
  /** The secret the simulated provider signs its events with (whsec_…); unset: random per process. Never logged. */
  paymentProviderWebhookSecret: string | undefined;
  /** With PAYMENT_PROVIDER=stripe: the account's secret API key (sk_… or a restricted rk_…). Never logged. */
  stripeSecretKey: string | undefined;
  /** With PAYMENT_PROVIDER=stripe: the signing secret (whsec_…) of the webhook endpoint registered at Stripe. Never logged. */
  stripeWebhookSecret: string | undefined;
  /** Where the Stripe SDK sends its requests (scheme, host, port; tests and local mocks); unset: Stripe's API. */
  stripeApiUrl: string | undefined;
  /** How long one request to Stripe may take before it is retried (twice, with the same idempotency key). */
  stripeTimeoutMs: number;
  /** The base of checkout_url (simulated) and of the page a Stripe checkout without return_url ends on (scheme, host, port); unset: http://localhost:<PORT>. */
  publicBaseUrl: string | undefined;
  /** How long a top-up's checkout stays open, in seconds. */
  topUpExpiresS: number;
  /** How often each worker process looks for pending top-ups past their expiry. */
  topUpExpirySweepMs: number;
  /** How often each worker process compares live volumes with their disks at the provider and repairs what differs (the reconciliation sweep). */
  reconcileSweepIntervalMs: number;
  /**
   * The compute provider (and the storage provider, which follows it): the simulated one (the
   * default; chaos and fuzz runs use it) or host agents (docs/explanation/host-agent.md).
   */
  computeProvider: 'simulated' | 'agent';
  /** With COMPUTE_PROVIDER=agent: the base URLs of the host agents (a server lives on one, chosen by free capacity; its disks on the same). */
  agentUrls: string[];
  /** The secret every request to an agent is signed with (each agent's AGENT_SECRET). Never logged. */
  agentSecret: string | undefined;
  /** How long a call to an agent may take (a graceful stop or reboot gets the guest's 120 s on top). */
  agentTimeoutMs: number;
  /** How often each worker process applies firewall rules that changed and were not applied yet at the provider. */
  firewallSyncIntervalMs: number;
}

export type TrustProxy = false | number | string[];

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new Error(`Setting ${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
}

function bool(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new Error(`Setting ${name} must be true or false, got "${raw}"`);
}

/** A rate from 0 to 1 (`off`, empty or unset: 0). */
function rate(env: NodeJS.ProcessEnv, name: string): number {
  const raw = (env[name] ?? '').trim();
  if (raw === '' || raw === 'off' || raw === 'false') return 0;
  if (!/^(0|1|0?\.\d+|1\.0+)$/.test(raw)) throw new Error(`Setting ${name} must be off or a rate from 0 to 1 such as 0.2, got "${raw}"`);
  return Number(raw);
}

const PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

function isProxyAddress(entry: string): boolean {
  if (PROXY_NAMES.includes(entry)) return true;
  const [address, bits, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}

/** TRUST_PROXY: unset, false or 0 (off), a hop count 1–10, or a comma-separated list of proxy addresses. */
function trustProxy(env: NodeJS.ProcessEnv): TrustProxy {
  const raw = (env.TRUST_PROXY ?? '').trim();
  if (raw === '' || raw === 'false' || raw === '0') return false;
  if (/^\d+$/.test(raw) && Number(raw) >= 1 && Number(raw) <= 10) return Number(raw);
  const entries = raw.split(',').map((e) => e.trim());
  if (!/^\d+$/.test(raw) && entries.every(isProxyAddress)) return entries;
  throw new Error(
    'Setting TRUST_PROXY must be false, a number of proxy hops from 1 to 10, or a comma-separated list of proxy addresses ' +
      `(IP, CIDR, loopback, linklocal, uniquelocal), got "${env.TRUST_PROXY}"`,
  );
}

/** IDEMPOTENCY_SECRET: unset, or at least 32 characters (the message never repeats the value). */
function secret(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (raw.length < 32) throw new Error(`Setting ${name} must be at least 32 characters (a random string), got ${raw.length}`);
  return raw;
}

/** SIMULATED_ACPI_IGNORED_IMAGES: unset (none), or comma-separated catalog ids (letters, digits, ".", "_", "-"). */
function idList(env: NodeJS.ProcessEnv, name: string): string[] {
  const raw = (env[name] ?? '').trim();
  if (raw === '') return [];
  const parts = raw.split(',').map((p) => p.trim());
  if (!parts.every((p) => /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(p))) {
    throw new Error(`Setting ${name} must be comma-separated image ids (such as ubuntu-24.04,debian-12), got "${raw}"`);
  }
  return [...new Set(parts)];
}

/** WEBHOOK_RETRY_SCHEDULE_S: 1 to 20 comma-separated whole seconds, the first 0. */
function schedule(env: NodeJS.ProcessEnv, name: string, fallback: number[]): number[] {
  const raw = (env[name] ?? '').trim();
  if (raw === '') return fallback;
  const parts = raw.split(',').map((p) => p.trim());
  if (parts.length > 20 || !parts.every((p) => /^\d{1,7}$/.test(p)) || Number(parts[0]) !== 0) {
    throw new Error(`Setting ${name} must be 1 to 20 comma-separated whole seconds, the first 0 (such as 0,5,300), got "${raw}"`);
  }
  return parts.map(Number);
}

/** EXPIRY_NOTICES_S: 0 to 10 distinct comma-separated whole seconds before expires_at (empty: no notices), largest first. */
function offsets(env: NodeJS.ProcessEnv, name: string, fallback: number[]): number[] {
  const raw = env[name];
  if (raw === undefined) return fallback;
  const parts = raw.split(',').map((p) => p.trim()).filter((p) => p !== '');
  if (parts.length > 10 || !parts.every((p) => /^\d{1,9}$/.test(p) && Number(p) > 0) || new Set(parts.map(Number)).size !== parts.length) {
    throw new Error(`Setting ${name} must be at most 10 distinct comma-separated whole seconds above 0 (such as 604800,259200,86400), got "${raw}"`);
  }
  return parts.map(Number).sort((a, b) => b - a);
}

/**
 * What a production process needs of each payment provider it may name: PAYMENT_PROVIDER=stripe
 * needs both secrets (anywhere) and PUBLIC_BASE_URL (in production: a customer without a
 * return_url is sent back there); simulated is refused in production (its checkout page credits
 * any wallet without a payment).
 */
export const STRIPE_SETTINGS = {
  STRIPE_SECRET_KEY: 'the secret API key of the Stripe account, sk_live_… (or sk_test_… in test mode, or a restricted rk_… key)',
  STRIPE_WEBHOOK_SECRET: "the signing secret of the webhook endpoint registered at Stripe, whsec_…",
} as const;

type PaymentSettings = Pick<Settings, 'paymentProvider' | 'stripeSecretKey' | 'stripeWebhookSecret' | 'stripeApiUrl'>;

/**
 * PAYMENT_PROVIDER: simulated, stripe or off; unset: simulated, off under NODE_ENV=production.
 * Under NODE_ENV=production simulated is refused; stripe requires STRIPE_SECRET_KEY and
 * STRIPE_WEBHOOK_SECRET (anywhere; one message naming each one missing) and, in production,
 * PUBLIC_BASE_URL. STRIPE_API_URL: unset, or an http(s) origin (tests and local mocks).
 */
function paymentProvider(env: NodeJS.ProcessEnv): PaymentSettings {
  const production = env.NODE_ENV === 'production';
  const raw = env.PAYMENT_PROVIDER || (production ? 'off' : 'simulated');
  if (raw !== 'simulated' && raw !== 'stripe' && raw !== 'off') throw new Error(`Setting PAYMENT_PROVIDER must be simulated, stripe or off, got "${raw}"`);
  if (raw === 'simulated' && production) {
    throw new Error(
      'Setting PAYMENT_PROVIDER=simulated is refused under NODE_ENV=production: its checkout page credits any wallet without a payment. ' +
        'Use PAYMENT_PROVIDER=stripe (with STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET), or off',
    );
  }
  const stripeSecretKey = env.STRIPE_SECRET_KEY || undefined;
  const stripeWebhookSecret = env.STRIPE_WEBHOOK_SECRET || undefined;
  const stripeApiUrl = origin(env, 'STRIPE_API_URL', 'http://127.0.0.1:12111');
  if (raw === 'stripe') {
    const missing = (Object.keys(STRIPE_SETTINGS) as (keyof typeof STRIPE_SETTINGS)[]).filter((name) => (env[name] ?? '') === '');
    if (missing.length > 0) {
      throw new Error(`PAYMENT_PROVIDER=stripe requires these settings: ${missing.map((name) => `${name} (${STRIPE_SETTINGS[name]})`).join('; ')}`);
    }
    // The messages name the setting and what it should look like, never its value.
    if (!/^(sk|rk)_(test|live)_\S+$/.test(stripeSecretKey!)) throw new Error('Setting STRIPE_SECRET_KEY must be a Stripe secret key: sk_live_…, sk_test_…, rk_live_… or rk_test_…');
    if (!/^whsec_\S+$/.test(stripeWebhookSecret!)) throw new Error('Setting STRIPE_WEBHOOK_SECRET must be the webhook signing secret Stripe shows for the endpoint: whsec_…');
    if (production && !env.PUBLIC_BASE_URL) {
      throw new Error('PAYMENT_PROVIDER=stripe requires PUBLIC_BASE_URL under NODE_ENV=production (where Stripe sends back a customer whose top-up has no return_url), such as https://cloud.example.com');
    }
  }
  return { paymentProvider: raw, stripeSecretKey, stripeWebhookSecret, stripeApiUrl };
}

/** An absolute http(s) URL without a path, query or user info (a trailing slash is dropped); unset: undefined. */
function origin(env: NodeJS.ProcessEnv, name: string, example: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (!url || !['http:', 'https:'].includes(url.protocol) || url.username || url.password || url.search || url.hash || url.pathname !== '/') {
    throw new Error(`Setting ${name} must be an absolute http(s) URL such as ${example}, got "${raw}"`);
  }
  return url.origin;
}

/** COMPUTE_PROVIDER, AGENT_URLS, AGENT_SECRET: agents need at least one http(s) URL and a secret of 32 characters or more. */
function computeProvider(env: NodeJS.ProcessEnv): { computeProvider: 'simulated' | 'agent'; agentUrls: string[]; agentSecret: string | undefined } {
  const raw = env.COMPUTE_PROVIDER || 'simulated';
  if (raw !== 'simulated' && raw !== 'agent') throw new Error(`Setting COMPUTE_PROVIDER must be simulated or agent, got "${raw}"`);
  const agentSecret = secret(env, 'AGENT_SECRET');
  const agentUrls = (env.AGENT_URLS ?? '').split(',').map((u) => u.trim()).filter(Boolean).map((u) => {
    let url: URL | undefined;
    try {
      url = new URL(u);
    } catch {
      url = undefined;
    }
    if (!url || !['http:', 'https:'].includes(url.protocol) || url.username || url.password || url.search || url.hash || url.pathname !== '/') {
      throw new Error(`Setting AGENT_URLS must be comma-separated http(s) URLs without a path such as http://127.0.0.1:7070, got "${u}"`);
    }
    return url.origin;
  });
  if (raw === 'agent') {
    if (agentUrls.length === 0) throw new Error('Setting AGENT_URLS must name at least one host agent when COMPUTE_PROVIDER=agent');
    if (!agentSecret) throw new Error('Setting AGENT_SECRET must be set (at least 32 characters) when COMPUTE_PROVIDER=agent');
  }
  return { computeProvider: raw, agentUrls, agentSecret };
}

/** DATABASE_POOL_MODE and DATABASE_DIRECT_URL: transaction mode needs a PostgreSQL server (DATABASE_URL). */
function poolMode(env: NodeJS.ProcessEnv): { dbPoolMode: 'direct' | 'transaction'; databaseDirectUrl: string | undefined } {
  const raw = env.DATABASE_POOL_MODE || 'direct';
  if (raw !== 'direct' && raw !== 'transaction') throw new Error(`Setting DATABASE_POOL_MODE must be direct or transaction, got "${raw}"`);
  if (raw === 'transaction' && !env.DATABASE_URL) throw new Error('Setting DATABASE_POOL_MODE=transaction requires DATABASE_URL (a pooler in front of PostgreSQL); the embedded engine has no pooler');
  const databaseDirectUrl = env.DATABASE_DIRECT_URL || undefined;
  if (databaseDirectUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseDirectUrl)) {
    // The message never repeats the value: it may hold a password.
    throw new Error('Setting DATABASE_DIRECT_URL must be a postgresql:// URL of the primary, past the pooler');
  }
  return { dbPoolMode: raw, databaseDirectUrl };
}

/** The server secrets a production process must have: what each one seals or keys. */
const PRODUCTION_SECRETS = {
  WEBHOOK_SECRETS_KEY: "seals the webhook endpoints' signing secrets",
  DEPLOYMENT_SECRETS_KEY: "seals the deployments' secret variables",
  IDEMPOTENCY_SECRET: 'keys the fingerprints and seals the stored answers of idempotent requests',
} as const;

/**
 * Under NODE_ENV=production each of PRODUCTION_SECRETS must be set (at least 32 characters):
 * unset, each falls back to a public constant and a database dump opens what it protects. One
 * message names every one missing (never a value).
 */
function productionSecrets(env: NodeJS.ProcessEnv): void {
  if (env.NODE_ENV !== 'production') return;
  const missing = (Object.keys(PRODUCTION_SECRETS) as (keyof typeof PRODUCTION_SECRETS)[]).filter((name) => (env[name] ?? '') === '');
  if (missing.length > 0) {
    throw new Error(
      `NODE_ENV=production requires these settings (each at least 32 random characters, the same on every process): ${missing.map((name) => `${name} (${PRODUCTION_SECRETS[name]})`).join('; ')}`,
    );
  }
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function loadSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  const logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new Error(`Setting LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  productionSecrets(env);
  // The demo owner's password is public: never loaded by default in production (the Docker image sets NODE_ENV=production).
  const demoSeed = bool(env, 'DEMO_SEED', env.NODE_ENV !== 'test' && env.NODE_ENV !== 'production');
  return {
    port: int(env, 'PORT', 3000, 0, 65535),
    databaseUrl: env.DATABASE_URL || undefined,
    ...poolMode(env),
    dataDir: env.DATA_DIR || './data',
    redisUrl: env.REDIS_URL || undefined,
    redisKeyPrefix: env.REDIS_KEY_PREFIX || 'cds:',
    rateLimitPerMinute: int(env, 'RATE_LIMIT_PER_MINUTE', 600, 1, 1_000_000),
    // Off unless set; with the demo data (npm start) on 3001.
    adminPort: int(env, 'ADMIN_PORT', demoSeed ? 3001 : 0, 0, 65535),
    adminHost: env.ADMIN_HOST || '127.0.0.1',
    adminRateLimitPerMinute: int(env, 'ADMIN_RATE_LIMIT_PER_MINUTE', 300, 1, 1_000_000),
    authFailuresPerMinute: int(env, 'AUTH_FAILURES_PER_MINUTE', 30, 1, 1_000_000),
    workerIntervalMs: int(env, 'WORKER_INTERVAL_MS', 500, 10, 3_600_000),
    workerEnabled: bool(env, 'WORKER_ENABLED', true),
    workerLeaseMs: int(env, 'WORKER_LEASE_MS', 30_000, 100, 3_600_000),
    logLevel,
    migrationsRun: bool(env, 'MIGRATIONS_RUN', true),
    demoSeed,
    dbPoolSize: int(env, 'DB_POOL_SIZE', 10, 1, 200),
    metricsPort: int(env, 'METRICS_PORT', 9464, 0, 65535),
    metricsHost: env.METRICS_HOST || '127.0.0.1',
    metricsGaugeCacheMs: int(env, 'METRICS_GAUGE_CACHE_MS', 5_000, 0, 300_000),
    // While the demo data (public password) may be loaded, only this machine reaches the service unless HOST says otherwise.
    host: env.HOST || (demoSeed ? '127.0.0.1' : '0.0.0.0'),
    shutdownTimeoutMs: int(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    httpKeepAliveTimeoutMs: int(env, 'HTTP_KEEP_ALIVE_TIMEOUT_MS', 65_000, 1_000, 600_000),
    trustProxy: trustProxy(env),
    workerConcurrency: int(env, 'WORKER_CONCURRENCY', 4, 1, 64),
    dbStatementTimeoutMs: int(env, 'DB_STATEMENT_TIMEOUT_MS', 30_000, 100, 3_600_000),
    dbConnectTimeoutMs: int(env, 'DB_CONNECT_TIMEOUT_MS', 5_000, 100, 600_000),
    dbIdleInTransactionTimeoutMs: int(env, 'DB_IDLE_IN_TRANSACTION_TIMEOUT_MS', 10_000, 100, 3_600_000),
    idempotencySecret: secret(env, 'IDEMPOTENCY_SECRET'),
    providerLatencyMs: int(env, 'PROVIDER_LATENCY_MS', 0, 0, 600_000),
    providerFaults: rate(env, 'PROVIDER_FAULTS'),
    providerDown: bool(env, 'PROVIDER_DOWN', false),
    providerRetryWindowMs: int(env, 'PROVIDER_RETRY_WINDOW_MS', 600_000, 0, 86_400_000),
    providerRetryBaseMs: int(env, 'PROVIDER_RETRY_BASE_MS', 1_000, 1, 60_000),
    orphanDiskSweepIntervalMs: int(env, 'ORPHAN_DISK_SWEEP_INTERVAL_MS', 60_000, 100, 86_400_000),
    orphanInstanceSweepIntervalMs: int(env, 'ORPHAN_INSTANCE_SWEEP_INTERVAL_MS', 60_000, 100, 86_400_000),
    simulatedAcpiIgnoredImages: idList(env, 'SIMULATED_ACPI_IGNORED_IMAGES'),
    webhookSecretsKey: secret(env, 'WEBHOOK_SECRETS_KEY'),
    deploymentSecretsKey: secret(env, 'DEPLOYMENT_SECRETS_KEY'),
    webhookSecretOverlapS: int(env, 'WEBHOOK_SECRET_OVERLAP_S', 86_400, 0, 2_592_000),
    webhookConcurrency: int(env, 'WEBHOOK_CONCURRENCY', 16, 1, 256),
    webhookConcurrencyPerOrganization: int(env, 'WEBHOOK_CONCURRENCY_PER_ORGANIZATION', 8, 1, 4096),
    webhookTimeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 60_000),
    webhookRetryScheduleS: schedule(env, 'WEBHOOK_RETRY_SCHEDULE_S', [0, 5, 300, 1800, 7200, 18000, 36000, 36000]),
    webhookDisableAfterS: int(env, 'WEBHOOK_DISABLE_AFTER_S', 432_000, 1, 31_536_000),
    webhookAllowPrivateUrls: bool(env, 'WEBHOOK_ALLOW_PRIVATE_URLS', false),
    ...paymentProvider(env),
    stripeTimeoutMs: int(env, 'STRIPE_TIMEOUT_MS', 10_000, 1_000, 80_000),
    paymentProviderDown: bool(env, 'PAYMENT_PROVIDER_DOWN', false),
    paymentProviderWebhookSecret: env.PAYMENT_PROVIDER_WEBHOOK_SECRET || undefined,
    publicBaseUrl: origin(env, 'PUBLIC_BASE_URL', 'https://cloud.example.com'),
    topUpExpiresS: int(env, 'TOP_UP_EXPIRES_S', 1800, 60, 86_400),
    topUpExpirySweepMs: int(env, 'TOP_UP_EXPIRY_SWEEP_MS', 5000, 100, 3_600_000),
    reconcileSweepIntervalMs: int(env, 'RECONCILE_SWEEP_INTERVAL_MS', 60_000, 100, 86_400_000),
    ...computeProvider(env),
    agentTimeoutMs: int(env, 'AGENT_TIMEOUT_MS', 30_000, 1_000, 600_000),
    firewallSyncIntervalMs: int(env, 'FIREWALL_SYNC_INTERVAL_MS', 5_000, 100, 3_600_000),
    serverRetentionS: int(env, 'SERVER_RETENTION_S', 604_800, 0, 31_536_000),
    volumeRetentionS: int(env, 'VOLUME_RETENTION_S', 604_800, 0, 31_536_000),
    termSweepMs: int(env, 'TERM_SWEEP_MS', 5_000, 100, 3_600_000),
    termSweepPausePct: int(env, 'TERM_SWEEP_PAUSE_PCT', 50, 0, 400),
    ipCooldownS: int(env, 'IP_COOLDOWN_S', 86_400, 0, 31_536_000),
    expiryNoticesS: offsets(env, 'EXPIRY_NOTICES_S', [604_800, 259_200, 86_400]),
    autoRenewLeadS: int(env, 'AUTO_RENEW_LEAD_S', 259_200, 0, 31_536_000),
    autoRenewRetryS: int(env, 'AUTO_RENEW_RETRY_S', 21_600, 1, 31_536_000),
  };
}

