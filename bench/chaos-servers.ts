/**
 * The chaos run's traffic on servers (servers.md): purchases (some replayed with their
 * Idempotency-Key), power actions and renewals of the servers this run bought, racing each other
 * and the kills, under PROVIDER_FAULTS (the simulated compute provider fails calls, or takes them
 * and loses the answer). What must hold whatever answers and whatever dies:
 *
 * - server_purchase: 202, or 402, 409 (out_of_stock, quota_exceeded, conflict), 503 (the compute
 *   circuit open: provider_unavailable; nothing reserved); a replay with the same key and body
 *   answers the same status (a stored answer), never a second server.
 * - server_power: start, stop {force?}, reboot {hard?} of a bought server: 202, 409 invalid_state
 *   (status, or an unfinished operation named in details.operation_id), 503.
 * - server_renew: 202, 402, 409 invalid_state; never 503 (no provider call).
 * - read_server: 200, status one of servers.md's.
 * - server_image: an image of a bought server (202, 402, 404 once deleted, 409 invalid_state or
 *   quota_exceeded, 503), or one of the run's images deleted (202, 409 invalid_state while it is
 *   created or busy, 503), a server bought from one (202, 400 a plan too small, 402, 404 once
 *   deleted, 409, 503) or a bought server rebuilt from one: images racing their servers' deletes,
 *   their own deletes and the kills; `verify` checks each charged once and each live one at the provider.
 *
 * `verify` at the end checks the vCPU counter, one unfinished vm.* operation per server, each
 * succeeded purchase captured once, and the wallet.
 */
import { randomUUID } from 'node:crypto';

interface Org {
  id: string;
}

interface Reply {
  status: number;
  body: string;
}

interface Context<O extends Org> {
  orgs: O[];
  stats: { count(action: string, outcome: string): void; problem(text: string): void };
  send(org: O, method: string, path: string, opts?: { body?: string; key?: string }): Promise<Reply | undefined>;
}

const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)];

const STATUSES = ['creating', 'running', 'stopping', 'stopped', 'starting', 'rebooting', 'deleting', 'deleted'];

/** The servers this run bought, by organization. */
const bought = new Map<string, string[]>();
/** The server images this run took, by organization. */
const images = new Map<string, string[]>();

const errorOf = (r: Reply): { code?: string; operation_id?: string } => {
  try {
    const e = (JSON.parse(r.body) as { error?: { code: string; details?: { operation_id?: string } } }).error;
    return e ? { code: e.code, operation_id: e.details?.operation_id } : {};
  } catch {
    return {};
  }
};

/** The catalog the seed adds for these actions: plans, images and id-jkt's server offer (plenty of vCPUs, so races are on the quota and the operations). */
export const SERVER_SEED = {
  server_plans: [
    { id: 'cx1', vcpus: 1, memory_gb: 2, disk_gb: 40 },
    { id: 'cx2', vcpus: 2, memory_gb: 4, disk_gb: 80 },
  ],
  images: [{ id: 'debian-12', name: 'Debian 12', type: 'system' }],
  serverOffer: {
    vcpu_capacity: 200,
    terms: [1, 3, 12],
    plans: [
      { plan: 'cx1', price_per_month: { USD: '4.50000', IDR: '72000' } },
      { plan: 'cx2', price_per_month: { USD: '9.00000', IDR: '144000' } },
    ],
  },
};

export function serverActions<O extends Org>(): { name: string; weight: number; run(ctx: Context<O>): Promise<void> }[] {
  const expect = (ctx: Context<O>, action: string, r: Reply | undefined, ok: (r: Reply, code: string | undefined) => boolean): void => {
    ctx.stats.count(action, r ? String(r.status) : 'cut_by_kill');
    if (r && !ok(r, errorOf(r).code)) ctx.stats.problem(`${action} answered ${r.status} ${r.body.slice(0, 200)}`);
  };
  return [
    {
      name: 'server_purchase',
      weight: 6,
      async run(ctx) {
        const org = pick(ctx.orgs);
        const key = randomUUID();
        const body = JSON.stringify({
          name: `s-${key.slice(0, 8)}`,
          region: 'id-jkt',
          plan: pick(['cx1', 'cx2']),
          image: 'debian-12',
          term_months: pick([1, 3]),
          currency: pick(['USD', 'IDR']),
          user_data: '#cloud-config\n',
        });
        const first = await ctx.send(org, 'POST', '/v1/servers', { body, key });
        const accepted = (r: Reply, code: string | undefined) =>
          r.status === 202 || r.status === 402 || (r.status === 409 && ['out_of_stock', 'quota_exceeded', 'conflict'].includes(code ?? '')) || (r.status === 503 && code === 'provider_unavailable');
        expect(ctx, 'server_purchase', first, accepted);
        if (first?.status === 202) bought.set(org.id, [...(bought.get(org.id) ?? []), (JSON.parse(first.body) as { server: { id: string } }).server.id]);
        if (Math.random() < 0.3) {
          const again = await ctx.send(org, 'POST', '/v1/servers', { body, key });
          expect(ctx, 'server_purchase_replay', again, accepted);
          if (first && again && first.status !== 503 && again.status !== 503 && again.status !== first.status) {
            ctx.stats.problem(`server purchase replay answered ${again.status}, the first ${first.status}`);
          }
          if (first?.status === 202 && again?.status === 202 && again.body !== first.body) ctx.stats.problem('server purchase replay answered another body');
          if (!first && again?.status === 202) bought.set(org.id, [...(bought.get(org.id) ?? []), (JSON.parse(again.body) as { server: { id: string } }).server.id]);
        }
      },
    },
    {
      name: 'server_power',
      weight: 8,
      async run(ctx) {
        const org = pick(ctx.orgs);
        const servers = bought.get(org.id);
        if (!servers?.length) return;
        const id = pick(servers);
        const [path, body] = pick([
          ['start', undefined],
          ['stop', undefined],
          ['stop', JSON.stringify({ force: true })],
          ['reboot', JSON.stringify({})],
          ['reboot', JSON.stringify({ hard: true })],
        ] as const);
        const r = await ctx.send(org, 'POST', `/v1/servers/${id}/${path}`, { body, key: Math.random() < 0.5 ? randomUUID() : undefined });
        expect(ctx, `server_${path}`, r, (x, code) => x.status === 202 || (x.status === 409 && code === 'invalid_state') || (x.status === 503 && code === 'provider_unavailable'));
      },
    },
    {
      name: 'server_renew',
      weight: 3,
      async run(ctx) {
        const org = pick(ctx.orgs);
        const servers = bought.get(org.id);
        if (!servers?.length) return;
        const r = await ctx.send(org, 'POST', `/v1/servers/${pick(servers)}/renew`, { body: JSON.stringify({ term_months: pick([1, 3, 12]) }), key: randomUUID() });
        expect(ctx, 'server_renew', r, (x, code) => x.status === 202 || x.status === 402 || (x.status === 409 && code === 'invalid_state'));
      },
    },
    {
      // A plan change (cx1 ⇄ cx2: the smaller boot disk is refused, 400), a fifth of them dry runs, racing power actions, renewals and deletes.
      name: 'server_resize',
      weight: 3,
      async run(ctx) {
        const org = pick(ctx.orgs);
        const servers = bought.get(org.id);
        if (!servers?.length) return;
        const dry = Math.random() < 0.2;
        const body = JSON.stringify({ plan: pick(['cx1', 'cx2']), ...(dry ? { dry_run: true } : {}) });
        const r = await ctx.send(org, 'POST', `/v1/servers/${pick(servers)}/resize`, { body, key: dry ? undefined : randomUUID() });
        expect(ctx, dry ? 'server_resize_dry_run' : 'server_resize', r, (x, code) =>
          (dry ? x.status === 200 : x.status === 202 || x.status === 402) || (x.status === 400 && code === 'invalid_request') ||
          (x.status === 409 && ['invalid_state', 'out_of_stock'].includes(code ?? '')) || (x.status === 503 && code === 'provider_unavailable'));
      },
    },
    {
      name: 'server_rebuild',
      weight: 2,
      async run(ctx) {
        const org = pick(ctx.orgs);
        const servers = bought.get(org.id);
        if (!servers?.length) return;
        const r = await ctx.send(org, 'POST', `/v1/servers/${pick(servers)}/rebuild`, { body: JSON.stringify({ image: 'debian-12', user_data: '#cloud-config\n' }), key: randomUUID() });
        expect(ctx, 'server_rebuild', r, (x, code) => x.status === 202 || (x.status === 409 && code === 'invalid_state') || (x.status === 503 && code === 'provider_unavailable'));
      },
    },
    {
      name: 'server_image',
      weight: 3,
      async run(ctx) {
        const org = pick(ctx.orgs);
        const servers = bought.get(org.id);
        const own = images.get(org.id) ?? [];
        const roll = Math.random();
        if (own.length > 0 && roll < 0.25) {
          const r = await ctx.send(org, 'DELETE', `/v1/images/${pick(own)}`, { key: randomUUID() });
          expect(ctx, 'image_delete', r, (x, code) => x.status === 202 || (x.status === 409 && code === 'invalid_state') || (x.status === 503 && code === 'provider_unavailable'));
          return;
        }
        if (own.length > 0 && roll < 0.45) {
          const key = randomUUID();
          const body = JSON.stringify({ name: `i-${key.slice(0, 8)}`, region: 'id-jkt', plan: pick(['cx1', 'cx2']), image: pick(own), term_months: 1, currency: pick(['USD', 'IDR']) });
          const r = await ctx.send(org, 'POST', '/v1/servers', { body, key });
          expect(ctx, 'server_purchase_from_image', r, (x, code) =>
            x.status === 202 || x.status === 402 || (x.status === 400 && code === 'invalid_request') || (x.status === 404 && code === 'not_found') ||
            (x.status === 409 && ['invalid_state', 'out_of_stock', 'quota_exceeded', 'conflict'].includes(code ?? '')) || (x.status === 503 && code === 'provider_unavailable'));
          if (r?.status === 202) bought.set(org.id, [...(bought.get(org.id) ?? []), (JSON.parse(r.body) as { server: { id: string } }).server.id]);
          return;
        }
        if (own.length > 0 && servers?.length && roll < 0.55) {
          const r = await ctx.send(org, 'POST', `/v1/servers/${pick(servers)}/rebuild`, { body: JSON.stringify({ image: pick(own) }), key: randomUUID() });
          expect(ctx, 'server_rebuild_from_image', r, (x, code) =>
            x.status === 202 || (x.status === 400 && code === 'invalid_request') || (x.status === 404 && code === 'not_found') ||
            (x.status === 409 && code === 'invalid_state') || (x.status === 503 && code === 'provider_unavailable'));
          return;
        }
        if (!servers?.length) return;
        const body = JSON.stringify({ name: `img-${randomUUID().slice(0, 8)}`, term_months: pick([1, 3]), currency: pick(['USD', 'IDR']) });
        const r = await ctx.send(org, 'POST', `/v1/servers/${pick(servers)}/images`, { body, key: randomUUID() });
        expect(ctx, 'server_image', r, (x, code) =>
          x.status === 202 || x.status === 402 || (x.status === 404 && code === 'not_found') ||
          (x.status === 409 && ['invalid_state', 'quota_exceeded'].includes(code ?? '')) || (x.status === 503 && code === 'provider_unavailable'));
        if (r?.status === 202) images.set(org.id, [...own, (JSON.parse(r.body) as { image: { id: string } }).image.id]);
      },
    },
    {
      name: 'read_server',
      weight: 2,
      async run(ctx) {
        const org = pick(ctx.orgs);
        const servers = bought.get(org.id);
        if (!servers?.length) return;
        const r = await ctx.send(org, 'GET', `/v1/servers/${pick(servers)}`);
        expect(ctx, 'read_server', r, (x) => x.status === 200 && STATUSES.includes((JSON.parse(x.body) as { status: string }).status));
      },
    },
  ];
}
