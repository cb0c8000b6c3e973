/**
 * Chaos run: mixed traffic from 20 organizations against three server processes while
 * processes are SIGKILLed and restarted, database backends are terminated and Redis stops and
 * starts; then every operation must end and `verify` must find every invariant holding.
 *
 *   npm run build && DATABASE_URL=postgresql://postgres@127.0.0.1:5432/cds_dev npm run chaos
 *
 * Settings (environment): DATABASE_URL (required: a PostgreSQL server on 127.0.0.1 or
 * localhost; the run creates a database of its own next to the one named, and drops it at the
 * end), CHAOS_S (seconds of traffic and faults, 60, at most 3600), CONCURRENCY (clients, 8, at
 * most 64), KILL_EVERY_MS (4000), TERMINATE_EVERY_MS (5000), REDIS_EVERY_MS (9000; Redis stays
 * down 3 s each time), WAIT_S (time allowed for operations to end afterwards, 120), CHAOS_KEEP=1
 * (keep the database for inspection), PROVIDER_FAULTS (the simulated storage provider's random
 * failure rate given to the servers, 0.1: disk steps fail and are retried with backoff; calls
 * that took effect lose their answer too), PROVIDER_LATENCY_MS (20, so steps are in flight when a
 * process is killed).
 *
 * Faults: SIGKILL of one server process, restarted at once (in-flight requests to it are cut:
 * counted, not failures); pg_terminate_backend of every backend of ITS OWN database but its own
 * connection; its OWN redis-server on a free port (never a shared Redis), stopped and started
 * (skipped, and said so, when redis-server is not on PATH).
 *
 * Prints one JSON summary: requests by action and status, connections cut by kills, operations
 * by outcome, faults injected, the verify report. Exits 1 on an invariant violation, any 5xx, a
 * network error on a process that was not killed, a 202 whose operation does not exist, an
 * idempotent replay that differs from the original, or operations still unfinished after WAIT_S.
 *
 * Traffic is the ACTIONS table below: add an entry (name, weight, run) to add an action.
 */
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { providerMix } from './chaos-provider-mix';
import { childEnv as processEnv, freePort } from './processes';
import { ChaosWebhooks, WEBHOOK_ACTIONS, WEBHOOK_SERVER_ENV } from './chaos-webhooks';
import { FUNDING_ACTIONS, FUNDING_SERVER_ENV } from './chaos-funding';
import { envInt } from './stats';
import { accessActions } from './chaos-access';
import { CHAOS_TEMPLATES, templateActions } from './chaos-templates';
import { SERVER_SEED, serverActions } from './chaos-servers';
import { consoleActions } from './chaos-servers-console';
import { ACCOUNT_ACTIONS } from './chaos-accounts';
import { doomedSeed, isDoomed, serverDeleteActions } from './chaos-servers-delete';
import { TERMS_ACTIONS, TERMS_SERVER_ENV, checkTerms, termsSeedFile, termsSeeded } from './chaos-terms';

const ROOT = join(__dirname, '../..');
const LOCAL_HOSTS = ['127.0.0.1', 'localhost'];
export const ORGS = 20;
export const VOLUMES_PER_ORG = 12;
const REQUEST_TIMEOUT_MS = 15_000;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)];

const childEnv = (extra: Record<string, string>): NodeJS.ProcessEnv => processEnv(extra, ['CHAOS_S', 'CONCURRENCY', 'WAIT_S']);

function onPath(binary: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${binary}`], { encoding: 'utf8' }).status === 0;
}

// ---------------------------------------------------------------------------------------------
// Server processes

export interface Server {
  id: number;
  child: ChildProcess;
  url: string;
  /** Its admin listener (ADMIN_PORT), when the run gave it one. */
  adminUrl?: string;
  killed: boolean;
  /** Whether it exited without being killed by this run. */
  crashed(): boolean;
  output(): string;
}

let serverSeq = 0;

/**
 * Starts `node dist/src/main.js`; a process that does not listen within `timeoutMs` (by default
 * 30 s, stretched by the load per core of the last minute, up to 4 times, on a busy machine) is
 * killed and the start fails.
 */
export async function startServer(env: NodeJS.ProcessEnv, timeoutMs = 30_000 * Math.min(4, Math.max(1, loadavg()[0] / availableParallelism()))): Promise<Server> {
  // ADMIN_PORT=auto: a free port of its own for each process's admin listener (a restart gets a new one).
  const adminPort = env.ADMIN_PORT === 'auto' ? await freePort() : undefined;
  if (adminPort) env = { ...env, ADMIN_PORT: String(adminPort), ADMIN_HOST: '127.0.0.1' };
  const child = spawn(process.execPath, ['dist/src/main.js'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const keep = (b: Buffer): void => {
    out = (out + b.toString()).slice(-50_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const server: Server = {
    id: ++serverSeq,
    child,
    url: '',
    ...(adminPort ? { adminUrl: `http://127.0.0.1:${adminPort}` } : {}),
    killed: false,
    crashed: () => !server.killed && (child.exitCode !== null || child.signalCode !== null),
    output: () => out,
  };
  server.url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start in ${Math.round(timeoutMs / 1000)} s:\n${out}`));
    }, timeoutMs);
    const check = (): void => {
      const m = /listening on http:\/\/localhost:(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(`http://127.0.0.1:${m[1]}`);
      }
    };
    child.stdout?.on('data', check);
    child.stderr?.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${out}`));
    });
  });
  return server;
}

// ---------------------------------------------------------------------------------------------
// Traffic

export interface Org {
  id: string;
  token: string;
  /** The owner's session (the account routes take sessions only). */
  session: string;
  volumes: string[];
  /** Snapshots the run took (the snapshot action). */
  snapshots?: string[];
  /** Reserved addresses the run took (the reserved_ip action). */
  reservedIps?: string[];
  server: string;
  /** Servers of its own the run may delete (chaos-servers-delete.ts), each with a disk. */
  doomed: string[];
}

export interface Reply {
  status: number;
  body: string;
}

/** A keyed renewal sent earlier, to be repeated with the same key and body. */
export interface Sent {
  org: Org;
  volume: string;
  key: string;
  body: string;
  /** The first answer, when one came back (a kill may have cut it). */
  reply?: Reply;
}

export class Stats {
  readonly byAction = new Map<string, Map<string, number>>();
  readonly problems: string[] = [];
  readonly accepted = new Set<string>();
  cutByKill = 0;

  count(action: string, outcome: string): void {
    const m = this.byAction.get(action) ?? new Map<string, number>();
    m.set(outcome, (m.get(outcome) ?? 0) + 1);
    this.byAction.set(action, m);
  }

  /** Keeps the first 200 problems; `always` ones (a server that crashed: the cause of the rest) are kept regardless. */
  problem(text: string, always = false): void {
    if (always || this.problems.length < 200) this.problems.push(text);
  }
}

export interface Context {
  orgs: Org[];
  stats: Stats;
  recent: Sent[];
  /** Whether `send(…, {admin: true})` reaches the admin listener with a billing staff token (the chaos run; not the cluster run). */
  staff?: boolean;
  /** Sends a request to one live server; undefined when a kill cut the connection. */
  send(
    org: Org,
    method: string,
    path: string,
    opts?: { body?: string; key?: string; session?: boolean; bearer?: string; headers?: Record<string, string>; admin?: boolean },
  ): Promise<Reply | undefined>;
}

const renewBody = (): string => JSON.stringify({ term_months: pick([1, 1, 3, 12]), ...(Math.random() < 0.2 ? { currency: pick(['USD', 'IDR']) } : {}) });

/** Records a 202's operation; checks a replay answers exactly as the original did. */
function noteRenewal(ctx: Context, sent: Sent, reply: Reply | undefined, replay: boolean): void {
  if (!reply) return;
  if (reply.status === 202) {
    const opId = (JSON.parse(reply.body) as { operation?: { id?: string } }).operation?.id;
    if (opId) ctx.stats.accepted.add(opId);
    else ctx.stats.problem(`202 without an operation id: ${reply.body.slice(0, 200)}`);
  }
  if (!replay) {
    sent.reply = reply;
    return;
  }
  // A replay must repeat a stored answer (202, 402, 404, 409 invalid_state) byte for byte.
  const original = sent.reply;
  if (original && [202, 402, 404].includes(original.status) && (reply.status !== original.status || reply.body !== original.body)) {
    ctx.stats.problem(`replay of key ${sent.key} answered ${reply.status} ${reply.body.slice(0, 120)}; the original was ${original.status} ${original.body.slice(0, 120)}`);
  }
  if (!original) sent.reply = reply;
}

export interface Action {
  name: string;
  weight: number;
  run(ctx: Context): Promise<void>;
}

/** Counts a volume action's answer; a 202 names its operation (and, for a purchase, the new volume joins the org's). */
function noteAction(ctx: Context, action: string, org: Org, reply: Reply | undefined): void {
  ctx.stats.count(action, reply ? String(reply.status) : 'cut_by_kill');
  if (!reply) return;
  if (reply.status !== 202) return;
  const body = JSON.parse(reply.body) as { operation?: { id?: string }; volume?: { id?: string } };
  if (body.operation?.id) ctx.stats.accepted.add(body.operation.id);
  else ctx.stats.problem(`${action} 202 without an operation id: ${reply.body.slice(0, 200)}`);
  if (action === 'purchase' && body.volume?.id && !org.volumes.includes(body.volume.id)) org.volumes.push(body.volume.id);
}

/** The traffic mix. Add an action as one more entry. */
export const ACTIONS: Action[] = [
  {
    // Buys a disk, half of them onto the org's server; a third are sent twice with the same key (the replay must match).
    name: 'purchase',
    weight: 6,
    async run(ctx) {
      const org = pick(ctx.orgs);
      const body = JSON.stringify({
        name: `p-${randomBytes(6).toString('hex')}`,
        region: 'id-jkt',
        size_gb: pick([10, 20, 50]),
        term_months: pick([1, 3, 12]),
        currency: pick(['USD', 'IDR']),
        ...(Math.random() < 0.5 ? { server_id: org.server } : {}),
      });
      const key = randomUUID();
      const reply = await ctx.send(org, 'POST', '/v1/volumes', { body, key });
      noteAction(ctx, 'purchase', org, reply);
      if (reply && Math.random() < 0.33) {
        const again = await ctx.send(org, 'POST', '/v1/volumes', { body, key });
        ctx.stats.count('purchase_repeat_key', again ? String(again.status) : 'cut_by_kill');
        // Stored answers (2xx, 402, 404, 409) replay byte for byte; a 5xx stored nothing.
        if (again && [202, 402, 404, 409].includes(reply.status) && (again.status !== reply.status || again.body !== reply.body)) {
          ctx.stats.problem(`purchase replay of key ${key} answered ${again.status} ${again.body.slice(0, 120)}; the original was ${reply.status} ${reply.body.slice(0, 120)}`);
        }
      }
    },
  },
  {
    // Snapshots of the org's disks racing the disks' deletes and renewals; half of the time one of the org's snapshots is deleted instead.
    name: 'snapshot',
    weight: 3,
    async run(ctx) {
      const org = pick(ctx.orgs);
      const snapshots = (org.snapshots ??= []);
      if (snapshots.length > 0 && Math.random() < 0.5) {
        const reply = await ctx.send(org, 'DELETE', `/v1/snapshots/${pick(snapshots)}`, { key: randomUUID() });
        noteAction(ctx, 'snapshot_delete', org, reply);
        return;
      }
      const body = JSON.stringify({ name: `s-${randomBytes(4).toString('hex')}`, term_months: pick([1, 3, 12]), currency: pick(['USD', 'IDR']) });
      const reply = await ctx.send(org, 'POST', `/v1/volumes/${pick(org.volumes)}/snapshots`, { body, key: randomUUID() });
      noteAction(ctx, 'snapshot', org, reply);
      if (reply?.status === 202) snapshots.push((JSON.parse(reply.body) as { snapshot: { id: string } }).snapshot.id);
    },
  },
  {
    // Reserved addresses: reserved (half of them onto a server), assigned to the org's servers (the doomed ones too, racing
    // their deletion), unassigned and released, each charged once; the pool of the region is far larger than the run needs.
    name: 'reserved_ip',
    weight: 3,
    async run(ctx) {
      const org = pick(ctx.orgs);
      const held = (org.reservedIps ??= []);
      const servers = [org.server, ...org.doomed];
      const roll = Math.random();
      if (held.length === 0 || roll < 0.3) {
        const body = JSON.stringify({
          region: 'id-jkt', term_months: pick([1, 3, 12]), currency: pick(['USD', 'IDR']), ...(Math.random() < 0.5 ? { server_id: pick(servers) } : {}),
        });
        const reply = await ctx.send(org, 'POST', '/v1/reserved-ips', { body, key: randomUUID() });
        noteAction(ctx, 'reserved_ip', org, reply);
        if (reply?.status === 202) held.push((JSON.parse(reply.body) as { reserved_ip: { id: string } }).reserved_ip.id);
        return;
      }
      const id = pick(held);
      if (roll < 0.65) {
        const reply = await ctx.send(org, 'POST', `/v1/reserved-ips/${id}/assign`, { body: JSON.stringify({ server_id: pick(servers) }), key: randomUUID() });
        noteAction(ctx, 'reserved_ip_assign', org, reply);
      } else if (roll < 0.85) {
        const reply = await ctx.send(org, 'POST', `/v1/reserved-ips/${id}/unassign`, { key: randomUUID() });
        noteAction(ctx, 'reserved_ip_unassign', org, reply);
      } else {
        const reply = await ctx.send(org, 'DELETE', `/v1/reserved-ips/${id}`, { key: randomUUID() });
        noteAction(ctx, 'reserved_ip_release', org, reply);
      }
    },
  },
  {
    name: 'attach',
    weight: 5,
    async run(ctx) {
      const org = pick(ctx.orgs);
      const reply = await ctx.send(org, 'POST', `/v1/volumes/${pick(org.volumes)}/attach`, { body: JSON.stringify({ server_id: org.server }), key: randomUUID() });
      noteAction(ctx, 'attach', org, reply);
    },
  },
  {
    name: 'detach',
    weight: 5,
    async run(ctx) {
      const org = pick(ctx.orgs);
      const reply = await ctx.send(org, 'POST', `/v1/volumes/${pick(org.volumes)}/detach`, { key: randomUUID() });
      noteAction(ctx, 'detach', org, reply);
    },
  },
  {
    // Deletes only disks this run bought (the seeded ones keep the renewals busy), with ?detach=true half of the time.
    name: 'delete',
    weight: 3,
    async run(ctx) {
      const org = pick(ctx.orgs);
      const bought = org.volumes.slice(VOLUMES_PER_ORG);
      if (bought.length === 0) return;
      const reply = await ctx.send(org, 'DELETE', `/v1/volumes/${pick(bought)}${Math.random() < 0.5 ? '?detach=true' : ''}`, { key: randomUUID() });
      noteAction(ctx, 'delete', org, reply);
    },
  },
  {
    name: 'renew',
    weight: 30,
    async run(ctx) {
      const org = pick(ctx.orgs);
      const sent: Sent = { org, volume: pick(org.volumes), key: randomUUID(), body: renewBody() };
      const reply = await ctx.send(org, 'POST', `/v1/volumes/${sent.volume}/renew`, { body: sent.body, key: sent.key });
      ctx.stats.count('renew', reply ? String(reply.status) : 'cut_by_kill');
      noteRenewal(ctx, sent, reply, false);
      ctx.recent.push(sent);
      if (ctx.recent.length > 200) ctx.recent.shift();
    },
  },
  {
    name: 'renew_repeat_key',
    weight: 12,
    async run(ctx) {
      if (ctx.recent.length === 0) return;
      const sent = pick(ctx.recent);
      const reply = await ctx.send(sent.org, 'POST', `/v1/volumes/${sent.volume}/renew`, { body: sent.body, key: sent.key });
      ctx.stats.count('renew_repeat_key', reply ? String(reply.status) : 'cut_by_kill');
      noteRenewal(ctx, sent, reply, true);
    },
  },
  {
    name: 'renew_same_key_concurrently',
    weight: 5,
    async run(ctx) {
      const org = pick(ctx.orgs);
      const sent: Sent = { org, volume: pick(org.volumes), key: randomUUID(), body: renewBody() };
      const replies = await Promise.all([1, 2, 3].map(() => ctx.send(org, 'POST', `/v1/volumes/${sent.volume}/renew`, { body: sent.body, key: sent.key })));
      const answered = replies.filter((r): r is Reply => r !== undefined);
      for (const r of replies) ctx.stats.count('renew_same_key_concurrently', r ? String(r.status) : 'cut_by_kill');
      for (const r of answered) noteRenewal(ctx, sent, r, sent.reply !== undefined);
      ctx.recent.push(sent);
    },
  },
  {
    // An API key created with an Idempotency-Key and retried (either may land on another process,
    // or be cut by a kill): every 201 of one key is the same answer, token included; then revoked
    // the same way (so the 20-key quota is not reached).
    name: 'api_key_create_retry',
    weight: 4,
    async run(ctx) {
      const org = pick(ctx.orgs);
      const key = randomUUID();
      const body = JSON.stringify({ name: `chaos-${key.slice(0, 8)}`, scopes: ['vm:read'] });
      const replies = [];
      for (let i = 0; i < 2; i++) {
        const reply = await ctx.send(org, 'POST', '/v1/api-keys', { body, key, session: true });
        ctx.stats.count('api_key_create_retry', reply ? String(reply.status) : 'cut_by_kill');
        if (reply) replies.push(reply);
      }
      const created = replies.filter((r) => r.status === 201);
      if (created.length === 2 && created[0].body !== created[1].body) {
        ctx.stats.problem(`POST /v1/api-keys retried with key ${key} answered another 201: ${created[1].body.slice(0, 80)}… (the token must be the same)`);
      }
      if (created.length === 0) return;
      const id = (JSON.parse(created[0].body) as { api_key: { id: string } }).api_key.id;
      const revokeKey = randomUUID();
      for (let i = 0; i < 2; i++) {
        const reply = await ctx.send(org, 'DELETE', `/v1/api-keys/${id}`, { key: revokeKey, session: true });
        ctx.stats.count('api_key_revoke_retry', reply ? String(reply.status) : 'cut_by_kill');
        if (reply && reply.status !== 204) ctx.stats.problem(`DELETE /v1/api-keys/${id} with key ${revokeKey} answered ${reply.status} ${reply.body.slice(0, 120)}`);
      }
    },
  },
  {
    // Grows a disk (a size it may already have: 400), a fifth of them dry runs, racing renewals, attaches, detaches, deletes and expiry.
    name: 'resize',
    weight: 4,
    async run(ctx) {
      const org = pick(ctx.orgs);
      const dry = Math.random() < 0.2;
      const body = JSON.stringify({ size_gb: pick([20, 60, 110, 120, 200]), ...(dry ? { dry_run: true } : {}) });
      const reply = await ctx.send(org, 'POST', `/v1/volumes/${pick(org.volumes)}/resize`, { body, key: dry ? undefined : randomUUID() });
      if (dry) {
        ctx.stats.count('resize_dry_run', reply ? String(reply.status) : 'cut_by_kill');
      } else {
        noteAction(ctx, 'resize', org, reply);
      }
      if (reply && ![200, 202, 400, 402, 409].includes(reply.status)) ctx.stats.problem(`resize answered ${reply.status} ${reply.body.slice(0, 200)}`);
      if (reply && reply.status === 200 && !dry) ctx.stats.problem(`resize without dry_run answered 200 ${reply.body.slice(0, 120)}`);
    },
  },
  {
    name: 'read_volumes',
    weight: 15,
    async run(ctx) {
      const org = pick(ctx.orgs);
      const path = Math.random() < 0.5 ? `/v1/volumes?limit=${pick([5, 20, 100])}` : `/v1/volumes/${pick(org.volumes)}`;
      const reply = await ctx.send(org, 'GET', path);
      ctx.stats.count('read_volumes', reply ? String(reply.status) : 'cut_by_kill');
    },
  },
  {
    name: 'read_operations',
    weight: 15,
    async run(ctx) {
      const org = pick(ctx.orgs);
      const mine = ctx.recent.filter((s) => s.org === org && s.reply?.status === 202);
      const path =
        mine.length > 0 && Math.random() < 0.6
          ? `/v1/operations/${(JSON.parse(pick(mine).reply!.body) as { operation: { id: string } }).operation.id}`
          : `/v1/operations?limit=${pick([5, 20])}${Math.random() < 0.3 ? `&status=${pick(['pending', 'running', 'succeeded', 'failed'])}` : ''}`;
      const reply = await ctx.send(org, 'GET', path);
      ctx.stats.count('read_operations', reply ? String(reply.status) : 'cut_by_kill');
      if (reply && path.startsWith('/v1/operations/op_') && reply.status !== 200) ctx.stats.problem(`GET ${path} of an accepted operation answered ${reply.status}`);
    },
  },
  {
    name: 'read_wallet',
    weight: 10,
    async run(ctx) {
      const reply = await ctx.send(pick(ctx.orgs), 'GET', '/v1/wallet');
      ctx.stats.count('read_wallet', reply ? String(reply.status) : 'cut_by_kill');
    },
  },
  {
    name: 'read_volume_options',
    weight: 8,
    async run(ctx) {
      const reply = await ctx.send(pick(ctx.orgs), 'GET', `/v1/volume-options?region=id-jkt&type=${pick(['premium', 'ssd'])}`);
      ctx.stats.count('read_volume_options', reply ? String(reply.status) : 'cut_by_kill');
    },
  },
  ...accessActions<Org>(),
  ...serverDeleteActions<Org>(),
  ...templateActions<Org>(),
  ...serverActions<Org>(),
  ...consoleActions<Org>(),
  ...ACCOUNT_ACTIONS,
  ...WEBHOOK_ACTIONS,
  ...FUNDING_ACTIONS,
  ...TERMS_ACTIONS,
];

export function pickAction(): Action {
  const total = ACTIONS.reduce((s, a) => s + a.weight, 0);
  let r = Math.random() * total;
  for (const a of ACTIONS) {
    r -= a.weight;
    if (r < 0) return a;
  }
  return ACTIONS[ACTIONS.length - 1];
}

// ---------------------------------------------------------------------------------------------
// Seed

/** The owners' passwords of the seed (random per run), to log in for the account routes. */
export const ownerPasswords: string[] = [];

/** The operator CLI of dist/ on `databaseUrl`: its standard output (a failure throws, but for verify, whose report is the answer). */
export function runCli(args: string[], databaseUrl: string, timeoutMs: number): string {
  const r = spawnSync(process.execPath, ['dist/src/cli/main.js', ...args], { cwd: ROOT, env: childEnv({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' }), encoding: 'utf8', timeout: timeoutMs });
  if (r.status !== 0 && args[0] !== 'verify') throw new Error(`cli ${args[0]} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

/** Seeds seedFile() through `cli seed` (the file written into `dir`): the traffic's organizations, doomed servers apart. */
export function seedOrgs(cli: (args: string[]) => string, dir: string): Org[] {
  const file = join(dir, 'seed.json');
  writeFileSync(file, JSON.stringify(seedFile()));
  const seeded = JSON.parse(cli(['seed', file])) as { organizations: { id: string; api_keys: { token: string }[]; volumes: string[]; servers: string[] }[] };
  return seeded.organizations.map((o) => ({
    id: o.id,
    token: o.api_keys[0].token,
    session: '',
    volumes: o.volumes.filter((v) => !isDoomed(v)),
    server: o.servers.find((s) => !isDoomed(s))!,
    doomed: o.servers.filter(isDoomed),
  }));
}

export function seedFile(): object {
  return {
    templates: CHAOS_TEMPLATES,
    server_plans: SERVER_SEED.server_plans,
    images: SERVER_SEED.images,
    regions: [
      {
        id: 'id-jkt',
        name: 'Jakarta',
        capacity_gb: 1_000_000,
        snapshot_price_per_gb_month: { USD: '0.01000', IDR: '160' },
        reserved_ipv4_price_per_month: { USD: '1.00000', IDR: '16000' },
        reserved_ipv4_pool: ['203.0.113.0/24', '198.51.100.0/24'],
        zones: [
          { id: 'id-jkt-a', available: true },
          { id: 'id-jkt-b', available: true },
        ],
        volume_offers: [
          { type: 'premium', min_gb: 10, max_gb: 4000, step_gb: 10, terms: [1, 3, 12], per_server_limit: 8, price_per_gb_month: { USD: '0.02000', IDR: '320' } },
          { type: 'ssd', min_gb: 20, max_gb: 2000, step_gb: 10, terms: [1, 3, 12], per_server_limit: 4, price_per_gb_month: { USD: '0.01250', IDR: '200' } },
        ],
        server_offer: SERVER_SEED.serverOffer,
      },
    ],
    organizations: Array.from({ length: ORGS }, (_, i) => ({
      id: `org_chaos${i + 1}`,
      name: `Chaos ${i + 1}`,
      // Some wallets run dry during the run (402s), some never do.
      wallet: i % 4 === 0 ? { USD: '3.00000', IDR: '20000' } : { USD: '5000.00000', IDR: '80000000' },
      members: [{ email: `owner${i + 1}@chaos.test`, password: (ownerPasswords[i] = randomBytes(18).toString('base64')), role: 'owner' }],
      api_keys: [{ name: 'chaos', scopes: ['vm:read', 'vm:write'] }],
      servers: [{ id: `vm_chaos${i + 1}`, name: 'web-1', region: 'id-jkt', zone: 'id-jkt-a' }, ...doomedSeed(i + 1).servers],
      volumes: [
        ...Array.from({ length: VOLUMES_PER_ORG }, (_, j) => ({
          id: `vol_chaos${i + 1}v${j + 1}`,
          name: `v${j + 1}`,
          type: j % 3 === 0 ? 'ssd' : 'premium',
          region: 'id-jkt',
          zone: 'id-jkt-a',
          size_gb: j % 3 === 0 ? 20 : 10 * (1 + (j % 5)),
          term_months: 1,
          currency: j % 2 === 0 ? 'USD' : 'IDR',
          ...(j < 2 ? { server: `vm_chaos${i + 1}`, mount_path: `/mnt/d${j}` } : {}),
        })),
        ...doomedSeed(i + 1).volumes,
      ],
    })),
  };
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const chaosMs = envInt('CHAOS_S', 60, 3600) * 1000;
  const concurrency = envInt('CONCURRENCY', 8, 64);
  const killEveryMs = envInt('KILL_EVERY_MS', 4000, 600_000, 500);
  const terminateEveryMs = envInt('TERMINATE_EVERY_MS', 5000, 600_000, 500);
  const redisEveryMs = envInt('REDIS_EVERY_MS', 9000, 600_000, 1000);
  const waitMs = envInt('WAIT_S', 120, 600) * 1000;
  const base = process.env.DATABASE_URL;
  if (!base) throw new Error('DATABASE_URL is required: the chaos run needs PostgreSQL (several processes share one database)');
  const baseUrl = new URL(base);
  if (!LOCAL_HOSTS.includes(baseUrl.hostname)) throw new Error('DATABASE_URL must name a server on 127.0.0.1 or localhost');

  // A database of its own: backends are terminated by database name, so nothing else is touched.
  const dbName = `cds_chaos_${Date.now()}_${randomBytes(3).toString('hex')}`;
  const admin = new Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${dbName}`);
  const dbUrl = new URL(base);
  dbUrl.pathname = `/${dbName}`;
  dbUrl.searchParams.delete('options');
  const databaseUrl = dbUrl.toString();
  const own = new Client({ connectionString: databaseUrl });

  const tmp = mkdtempSync(join(tmpdir(), 'cds-chaos-'));
  const servers: Server[] = [];
  const faults = { kills: 0, restarts: 0, backend_terminations: 0, backends_terminated: 0, redis_stops: 0, redis_starts: 0, redis: 'own redis-server' };
  let redis: ChildProcess | undefined;
  let redisPort = 0;
  const stats = new Stats();
  let exitCode = 1;
  let webhooks: ChaosWebhooks | undefined;

  const startRedis = async (): Promise<void> => {
    redis = spawn('redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    for (let i = 0; i < 50; i++) {
      if (spawnSync('redis-cli', ['-p', String(redisPort), 'ping'], { encoding: 'utf8' }).stdout?.trim() === 'PONG') return;
      await sleep(100);
    }
    throw new Error('own redis-server did not answer PING');
  };
  const stopRedis = async (): Promise<void> => {
    const r = redis;
    redis = undefined;
    if (!r || r.exitCode !== null) return;
    const exited = new Promise((resolve) => r.once('exit', resolve));
    r.kill('SIGKILL');
    await exited;
  };

  try {
    const withRedis = onPath('redis-server') && onPath('redis-cli');
    if (withRedis) {
      redisPort = await freePort();
      await startRedis();
    } else {
      faults.redis = 'skipped: redis-server (or redis-cli) is not on PATH; no REDIS_URL, no Redis faults';
    }
    const serverEnv = childEnv({
      DATABASE_URL: databaseUrl,
      ...(withRedis ? { REDIS_URL: `redis://127.0.0.1:${redisPort}`, REDIS_KEY_PREFIX: `${dbName}:` } : {}),
      PORT: '0',
      METRICS_PORT: '0',
      HOST: '127.0.0.1',
      DEMO_SEED: 'false',
      LOG_LEVEL: 'info',
      WORKER_ENABLED: 'true',
      WORKER_INTERVAL_MS: '100',
      WORKER_LEASE_MS: '3000',
      RATE_LIMIT_PER_MINUTE: '1000000',
      DB_POOL_SIZE: '5',
      SHUTDOWN_TIMEOUT_MS: '2000',
      // The storage provider fails at random: disk steps are retried with backoff (1 s, 2 s … of
      // PROVIDER_RETRY_BASE_MS 200 here, within a window longer than the run's wait).
      PROVIDER_FAULTS: process.env.PROVIDER_FAULTS ?? '0.1',
      PROVIDER_LATENCY_MS: process.env.PROVIDER_LATENCY_MS ?? '20',
      PROVIDER_RETRY_BASE_MS: '200',
      ...WEBHOOK_SERVER_ENV,
      ...FUNDING_SERVER_ENV,
      ...TERMS_SERVER_ENV,
      ADMIN_PORT: 'auto',
      ...providerMix.env(),
    });

    // Migrate and seed through the CLI, as an operator would.
    const cli = (args: string[]): string => runCli(args, databaseUrl, 120_000);
    cli(['migrate']);
    const orgs = seedOrgs(cli, tmp);
    // Disks and bought servers that expire during the run (chaos-terms.ts): from about 15 s after
    // the servers are up (a few seconds from now) to 15 s before the traffic stops.
    const termsFile = termsSeedFile(Date.now() + 5_000, chaosMs / 1000);
    writeFileSync(join(tmp, 'terms.json'), JSON.stringify(termsFile));
    termsSeeded(JSON.parse(cli(['seed', join(tmp, 'terms.json')])), termsFile);
    // Billing staff of the admin API: refunds and adjustments race the customers' purchases.
    const staffToken = (JSON.parse(cli(['staff:create', '--email', 'billing@chaos.test', '--name', 'Chaos billing', '--role', 'billing'])) as { token: string }).token;

    servers.push(...(await Promise.all([0, 1, 2].map(() => startServer(serverEnv)))));
    for (const [i, org] of orgs.entries()) {
      const res = await fetch(`${servers[0].url}/v1/auth/login`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ email: `owner${i + 1}@chaos.test`, password: ownerPasswords[i] }),
      });
      if (res.status !== 200) throw new Error(`login of owner${i + 1}@chaos.test answered ${res.status}`);
      org.session = ((await res.json()) as { token: string }).token;
    }
    await own.connect();
    webhooks = await ChaosWebhooks.start(orgs, servers[0].url, (text) => stats.problem(text));

    const live = (): Server[] => servers.filter((s) => !s.killed);
    const ctx: Context = {
      orgs,
      stats,
      recent: [],
      staff: true,
      async send(org, method, path, opts = {}) {
        const server = pick(live());
        const headers: Record<string, string> = { Authorization: `Bearer ${opts.admin ? staffToken : (opts.bearer ?? (opts.session ? org.session : org.token))}` };
        if (opts.body) headers['Content-Type'] = 'application/json';
        if (opts.key) headers['Idempotency-Key'] = opts.key;
        Object.assign(headers, opts.headers);
        try {
          const res = await fetch((opts.admin ? server.adminUrl! : server.url) + path, { method, headers, body: opts.body, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
          const body = await res.text();
          // A console is made by a call to the compute provider within the request: after three
          // failed calls (PROVIDER_FAULTS) it is a documented 503 provider_unavailable.
          const consoleRefused = res.status === 503 && path.endsWith('/console') && body.includes('"provider_unavailable"');
          if (res.status >= 500 && !consoleRefused && !providerMix.expected(res.status, body)) {
            // The server's log line for that request id says why.
            const requestId = res.headers.get('x-request-id') ?? '';
            await sleep(100);
            const cause = server.output().split('\n').filter((l) => requestId && l.includes(requestId) && /"level":50|unexpected/.test(l)).join(' ').slice(0, 1500);
            stats.problem(`${res.status} from server ${server.id}: ${method} ${path} ${body.slice(0, 300)} log: ${cause}`);
          }
          return { status: res.status, body };
        } catch (err) {
          if (server.killed) {
            stats.cutByKill += 1;
            return undefined;
          }
          const e = err as Error & { cause?: { code?: string; message?: string } };
          stats.problem(`${method} ${path} to server ${server.id} (not killed): ${e.name} ${e.message} ${e.cause?.code ?? ''} ${e.cause?.message ?? ''}`);
          stats.count('network_error', e.cause?.code ?? e.name);
          return undefined;
        }
      },
    };

    const deadline = Date.now() + chaosMs;
    const restarts: Promise<void>[] = [];
    const clients = Array.from({ length: concurrency }, async () => {
      while (Date.now() < deadline) await pickAction().run(ctx);
    });

    // Fault injectors, each on its own clock.
    const killer = (async () => {
      while (Date.now() + killEveryMs < deadline) {
        await sleep(killEveryMs * (0.5 + Math.random()));
        // Keep one process serving while the others restart (a start takes a few seconds).
        if (live().length < 2) continue;
        const victim = pick(live());
        victim.killed = true;
        victim.child.kill('SIGKILL');
        faults.kills += 1;
        const restartEnv = providerMix.restartEnv(serverEnv);
        restarts.push(
          startServer(restartEnv).then((replacement) => {
            providerMix.started(replacement, restartEnv);
            servers.push(replacement);
            faults.restarts += 1;
          }),
        );
      }
    })();
    const terminator = (async () => {
      while (Date.now() + terminateEveryMs < deadline) {
        await sleep(terminateEveryMs * (0.5 + Math.random()));
        const r = await own.query(`SELECT count(*) FILTER (WHERE t)::int AS n FROM (
                                     SELECT pg_terminate_backend(pid) AS t FROM pg_stat_activity
                                      WHERE datname = $1 AND pid <> pg_backend_pid()) x`, [dbName]);
        faults.backend_terminations += 1;
        faults.backends_terminated += (r.rows[0] as { n: number }).n;
      }
    })();
    const redisFaults = (async () => {
      if (!withRedis) return;
      while (Date.now() + redisEveryMs < deadline) {
        await sleep(redisEveryMs * (0.5 + Math.random()));
        await stopRedis();
        faults.redis_stops += 1;
        await sleep(3000);
        await startRedis();
        faults.redis_starts += 1;
      }
    })();
    await Promise.all([...clients, killer, terminator, redisFaults]);
    await Promise.all(restarts);

    // Every operation must end (a killed process's operations after their lease).
    const drainStarted = Date.now();
    let unfinished = -1;
    while (Date.now() - drainStarted < waitMs) {
      unfinished = Number((await own.query(`SELECT count(*)::int AS n FROM operations WHERE status IN ('pending', 'running')`)).rows[0].n);
      if (unfinished === 0) break;
      await sleep(250);
    }
    if (unfinished !== 0) stats.problem(`${unfinished} operations still pending or running ${waitMs / 1000} s after the traffic stopped`);

    const accepted = [...stats.accepted];
    const found = new Set((await own.query(`SELECT id FROM operations WHERE id = ANY($1)`, [accepted])).rows.map((r: { id: string }) => r.id));
    const missing = accepted.filter((id) => !found.has(id));
    if (missing.length > 0) stats.problem(`${missing.length} accepted (202) operations do not exist: ${missing.slice(0, 10).join(', ')}`);
    await webhooks.check(own, live()[0].url, new Map(orgs.map((o) => [o.id, o.token])), waitMs);
    const internalFailures = (await own.query(
      `SELECT type, error->>'message' AS message, count(*)::int AS n FROM operations WHERE status = 'failed' AND error->>'code' = 'internal' GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2 LIMIT 10`,
    )).rows as { type: string; message: string; n: number }[];
    const outcomes = (await own.query(
      `SELECT status, coalesce(error->>'code', '') AS code, count(*)::int AS n FROM operations GROUP BY 1, 2 ORDER BY 1, 2`,
    )).rows as { status: string; code: string; n: number }[];
    if (process.env.CHAOS_LOGS) for (const s of servers) writeFileSync(`${process.env.CHAOS_LOGS}.${s.id}.log`, s.output());
    for (const s of servers) if (s.crashed()) stats.problem(`server ${s.id} exited on its own: ${s.output().slice(-2000)}`, true);

    // Every expiring resource renewed, suspended or released by its deadline (the sweep's period + 60 s).
    const terms = await checkTerms(own, Number(TERMS_SERVER_ENV.TERM_SWEEP_MS) + 60_000, (text) => stats.problem(text));
    const mix = await providerMix.settle(own, servers, startServer, serverEnv);
    const verifyOut = cli(['verify']);
    const report = verifyOut ? (JSON.parse(verifyOut) as { ok: boolean; checks: { name: string; violations: number }[]; violations: unknown[] }) : undefined;
    if (!report?.ok) stats.problem(`verify found ${report ? report.violations.length : 'an error, no report'}`);

    const summary = {
      ok: stats.problems.length === 0,
      duration_s: chaosMs / 1000,
      database: dbName,
      servers_started: servers.length,
      ...mix,
      requests: Object.fromEntries([...stats.byAction].map(([a, m]) => [a, Object.fromEntries([...m].sort())])),
      requests_by_status: [...stats.byAction.values()].reduce<Record<string, number>>((acc, m) => {
        for (const [status, n] of m) acc[status] = (acc[status] ?? 0) + n;
        return acc;
      }, {}),
      requests_total: [...stats.byAction.values()].reduce((s, m) => s + [...m.values()].reduce((x, y) => x + y, 0), 0),
      connections_cut_by_kills: stats.cutByKill,
      accepted_operations: accepted.length,
      operations: outcomes.map((o) => ({ status: o.status, ...(o.code ? { error: o.code } : {}), count: o.n })),
      // What an `internal` failure was (a type and message each), so a run's report says what to look at.
      internal_failures: internalFailures,
      faults,
      invariants: report ? { ok: report.ok, checks: Object.fromEntries(report.checks.map((c) => [c.name, c.violations])), violations: report.violations.slice(0, 20) } : 'verify failed to run',
      webhooks: webhooks.summary(),
      terms,
      problems: stats.problems,
    };
    process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
    exitCode = summary.ok ? 0 : 1;
  } finally {
    for (const s of servers) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
    await stopRedis();
    await webhooks?.close();
    await own.end().catch(() => undefined);
    if (process.env.CHAOS_KEEP !== '1') await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
    rmSync(tmp, { recursive: true, force: true });
  }
  process.exitCode = exitCode;
}

// The traffic, the seed and the server processes above are reused by bench/cluster.ts.
if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`chaos: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
}
