/**
 * The chaos run's event webhooks (funding.md "Verify, chaos run, metrics"): a receiver of its
 * own on 127.0.0.1 and two endpoints per organization (WEBHOOK_ALLOW_PRIVATE_URLS, schedule
 * 0,1,2,4 s), one always 2xx, one answering 500 (30%) or hanging (10%) and 410 after its 50th
 * request. After the run: every signature verified (standardwebhooks), every ended operation
 * received at its organization's 2xx endpoint at least once with data equal to the operation's
 * final GET (member for member; volume.deleted: the volume's), every top-up paid after the
 * endpoints existed received as wallet.top_up.succeeded and wallet.credited with data equal, byte
 * for byte, to its GET and to its credit as GET /v1/wallet/transactions lists it (a failed or
 * expired top-up's event: to its GET unless a late payment since made it succeeded; a refunded
 * top-up's: its last wallet.top_up.refunded, the others superseded), and the 410 endpoint disabled
 * once it answered 410.
 */
import http from 'node:http';
import { AddressInfo } from 'node:net';
import { Client } from 'pg';
import { Webhook } from 'standardwebhooks';

/** Settings the chaos run's servers get for webhooks. */
export const WEBHOOK_SERVER_ENV: Record<string, string> = {
  WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  WEBHOOK_RETRY_SCHEDULE_S: '0,1,2,4',
  WEBHOOK_TIMEOUT_MS: '1000',
};

/** JSON text with every object's members sorted: equal for equal values whatever the member order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

interface ChaosOrg {
  id: string;
  session: string;
}

interface Endpoint {
  id: string;
  org: string;
  kind: 'healthy' | 'flaky';
  verifier: Webhook;
  requests: number;
  answered410: boolean;
}

export class ChaosWebhooks {
  private server!: http.Server;
  private port = 0;
  private readonly endpoints = new Map<string, Endpoint>();
  private readonly hanging = new Set<http.ServerResponse>();
  /** Events received with a valid signature at a healthy endpoint, by event id. */
  private readonly healthy = new Map<string, { type: string; data: { id: string } }>();
  readonly stats = { requests: 0, bad_signatures: 0, answered: {} as Record<string, number>, events_received: 0, operations_checked: 0, volumes_checked: 0, top_up_events_checked: 0, credits_checked: 0 };
  /** When the endpoints existed: top-ups paid since then must have sent their events. */
  private startedAt = new Date();

  private constructor(private readonly problem: (text: string) => void) {}

  /** Starts the receiver and creates the endpoints (owners' sessions) through `baseUrl`. */
  static async start(orgs: ChaosOrg[], baseUrl: string, problem: (text: string) => void): Promise<ChaosWebhooks> {
    const w = new ChaosWebhooks(problem);
    w.server = http.createServer((req, res) => w.receive(req, res));
    await new Promise<void>((resolve) => w.server.listen(0, '127.0.0.1', resolve));
    w.port = (w.server.address() as AddressInfo).port;
    for (const org of orgs) {
      for (const kind of ['healthy', 'flaky'] as const) {
        const res = await fetch(`${baseUrl}/v1/webhook-endpoints`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${org.session}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ url: `http://127.0.0.1:${w.port}/${kind}/${org.id}`, events: ['*'] }),
        });
        if (res.status !== 201) throw new Error(`creating a webhook endpoint answered ${res.status}: ${await res.text()}`);
        const body = (await res.json()) as { webhook_endpoint: { id: string }; secret: string };
        endpointsByOrg.set(org.id, [...(endpointsByOrg.get(org.id) ?? []), body.webhook_endpoint.id]);
        w.endpoints.set(`/${kind}/${org.id}`, { id: body.webhook_endpoint.id, org: org.id, kind, verifier: new Webhook(body.secret), requests: 0, answered410: false });
      }
    }
    w.startedAt = new Date();
    return w;
  }

  private receive(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      this.stats.requests += 1;
      const endpoint = this.endpoints.get(req.url ?? '');
      const answer = (status: number): void => {
        this.stats.answered[status] = (this.stats.answered[status] ?? 0) + 1;
        res.writeHead(status).end();
      };
      if (!endpoint) return answer(404);
      const body = Buffer.concat(chunks).toString('utf8');
      let event: { id: string; type: string; data: { id: string } };
      try {
        event = endpoint.verifier.verify(body, req.headers as Record<string, string>) as typeof event;
      } catch (err) {
        this.stats.bad_signatures += 1;
        this.problem(`webhook with a bad signature at ${req.url}: ${(err as Error).message}`);
        return answer(400);
      }
      endpoint.requests += 1;
      if (endpoint.kind === 'healthy') {
        this.healthy.set(event.id, { type: event.type, data: event.data });
        return answer(200);
      }
      if (endpoint.requests > 50) {
        endpoint.answered410 = true;
        return answer(410);
      }
      const roll = Math.random();
      if (roll < 0.3) return answer(500);
      if (roll < 0.4) {
        this.hanging.add(res);
        return;
      }
      answer(200);
    });
  }

  /**
   * Once every operation ended: waits (up to `waitMs`) for the healthy endpoints' deliveries to
   * end, then compares what they received with the database and the final GETs.
   */
  async check(own: Client, baseUrl: string, tokens: Map<string, string>, waitMs: number): Promise<void> {
    const healthyIds = [...this.endpoints.values()].filter((e) => e.kind === 'healthy').map((e) => e.id);
    const started = Date.now();
    let pending = -1;
    while (Date.now() - started < waitMs) {
      pending = Number((await own.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'pending' AND endpoint_id = ANY($1)`, [healthyIds])).rows[0].n);
      if (pending === 0) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    if (pending !== 0) this.problem(`${pending} webhook deliveries to the 2xx endpoints still pending ${waitMs / 1000} s after the operations ended`);
    const failed = Number((await own.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'failed' AND endpoint_id = ANY($1)`, [healthyIds])).rows[0].n);
    if (failed > 0) this.problem(`${failed} webhook deliveries to the 2xx endpoints failed`);
    this.stats.events_received = this.healthy.size;

    // Every ended operation reached its organization's 2xx endpoint.
    const ended = (await own.query(`SELECT id, org_id FROM operations WHERE status IN ('succeeded', 'failed') AND org_id = ANY($1)`, [[...new Set([...this.endpoints.values()].map((e) => e.org))]])).rows as { id: string; org_id: string }[];
    const received = new Map<string, { type: string; data: { id: string } }>();
    for (const e of this.healthy.values()) if (e.type.startsWith('operation.')) received.set(e.data.id, e);
    const missing = ended.filter((o) => !received.has(o.id));
    if (missing.length > 0) this.problem(`${missing.length} ended operations never reached their organization's 2xx webhook endpoint: ${missing.slice(0, 10).map((o) => o.id).join(', ')}`);

    // Each event's data is the resource's final GET.
    const orgOf = new Map(ended.map((o) => [o.id, o.org_id]));
    const volumeOrg = new Map((await own.query(`SELECT id, org_id FROM volumes`)).rows.map((r: { id: string; org_id: string }) => [r.id, r.org_id]));
    const serverOrg = new Map((await own.query(`SELECT id, org_id FROM servers`)).rows.map((r: { id: string; org_id: string }) => [r.id, r.org_id]));
    const checks = [...this.healthy.values()].filter((e) => e.type.startsWith('operation.') || e.type === 'volume.deleted' || e.type === 'server.deleted');
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < checks.length) {
        const e = checks[next++];
        const isOp = e.type.startsWith('operation.');
        const isServer = e.type === 'server.deleted';
        const org = isOp ? orgOf.get(e.data.id) : isServer ? serverOrg.get(e.data.id) : volumeOrg.get(e.data.id);
        const token = org && tokens.get(org);
        if (!token) continue;
        const res = await fetch(`${baseUrl}/v1/${isOp ? 'operations' : isServer ? 'servers' : 'volumes'}/${e.data.id}`, { headers: { Authorization: `Bearer ${token}` } });
        const got = await res.text();
        if (isOp) this.stats.operations_checked += 1;
        else this.stats.volumes_checked += 1;
        // Members compared, not bytes: the stored result (jsonb) comes back with its members in jsonb's order.
        if (res.status !== 200 || canonical(JSON.parse(got)) !== canonical(e.data)) this.problem(`${e.type} event data of ${e.data.id} differs from its final GET (${res.status}): ${JSON.stringify(e.data).slice(0, 300)} vs ${got.slice(0, 300)}`);
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    await this.checkWallet(own, baseUrl, tokens);

    // An endpoint that answered 410 is disabled (gone).
    for (const e of this.endpoints.values()) {
      if (!e.answered410) continue;
      const row = (await own.query(`SELECT status, disabled_reason FROM webhook_endpoints WHERE id = $1`, [e.id])).rows[0] as { status: string; disabled_reason: string | null } | undefined;
      if (row?.status !== 'disabled' || row.disabled_reason !== 'gone') this.problem(`webhook endpoint ${e.id} answered 410 but is ${row?.status} (${row?.disabled_reason})`);
    }
  }

  /** The wallet's events: each top-up event's data its GET (byte for byte), each credit its history entry; every paid top-up announced. */
  private async checkWallet(own: Client, baseUrl: string, tokens: Map<string, string>): Promise<void> {
    const topUps = (await own.query(`SELECT id, org_id, status, paid_at FROM top_ups`)).rows as { id: string; org_id: string; status: string; paid_at: Date | null }[];
    const byId = new Map(topUps.map((t) => [t.id, t]));
    const seen = new Map<string, Set<string>>();
    const get = async (org: string, path: string): Promise<{ status: number; text: string } | undefined> => {
      const token = tokens.get(org);
      if (!token) return undefined;
      const res = await fetch(`${baseUrl}${path}`, { headers: { Authorization: `Bearer ${token}` } });
      return { status: res.status, text: await res.text() };
    };
    for (const e of this.healthy.values()) {
      if (!e.type.startsWith('wallet.')) continue;
      const data = e.data as unknown as { id: string; status?: string; top_up_id?: string | null };
      const topUpId = e.type === 'wallet.credited' ? data.top_up_id : data.id;
      const topUp = topUpId ? byId.get(topUpId) : undefined;
      if (topUpId) seen.set(topUpId, (seen.get(topUpId) ?? new Set()).add(e.type));
      if (!topUp) continue;
      if (e.type === 'wallet.credited') {
        // The top-up's credit (its refunds' debits name it too).
        const res = await get(topUp.org_id, `/v1/wallet/transactions?top_up_id=${topUp.id}&type=credit`);
        if (!res) continue;
        this.stats.credits_checked += 1;
        const listed = res.status === 200 ? JSON.stringify((JSON.parse(res.text) as { transactions: unknown[] }).transactions[0]) : res.text;
        if (listed !== JSON.stringify(e.data)) this.problem(`wallet.credited of ${topUp.id} differs from its history entry (${res.status}): ${JSON.stringify(e.data)} vs ${listed}`);
        continue;
      }
      const res = await get(topUp.org_id, `/v1/wallet/top-ups/${topUp.id}`);
      if (!res) continue;
      this.stats.top_up_events_checked += 1;
      // A failed or expired top-up may since have been paid late (money received is never dropped).
      // A refund since (billing staff) supersedes every event but its own; of several refunds, the last one's.
      const refunded = topUp.status === 'partially_refunded' || topUp.status === 'refunded';
      const shown = res.status === 200 ? (JSON.parse(res.text) as { refunded_amount?: string }) : {};
      const superseded =
        (e.type !== 'wallet.top_up.succeeded' && topUp.status === 'succeeded') ||
        (refunded && (e.type !== 'wallet.top_up.refunded' || (e.data as { refunded_amount?: string }).refunded_amount !== shown.refunded_amount));
      if (!superseded && (res.status !== 200 || res.text !== JSON.stringify(e.data))) this.problem(`${e.type} event data of ${topUp.id} differs from its GET (${res.status}): ${JSON.stringify(e.data)} vs ${res.text}`);
    }
    const unannounced = topUps.filter((t) => ['succeeded', 'partially_refunded', 'refunded'].includes(t.status) && t.paid_at !== null && t.paid_at > this.startedAt && tokens.has(t.org_id))
      .filter((t) => !seen.get(t.id)?.has('wallet.top_up.succeeded') || !seen.get(t.id)?.has('wallet.credited'));
    if (unannounced.length > 0) this.problem(`${unannounced.length} paid top-ups never reached their organization's 2xx webhook endpoint as wallet.top_up.succeeded and wallet.credited: ${unannounced.slice(0, 10).map((t) => t.id).join(', ')}`);
  }

  summary(): object {
    const gone = [...this.endpoints.values()].filter((e) => e.answered410).length;
    return { ...this.stats, endpoints: this.endpoints.size, endpoints_that_answered_410: gone };
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** The endpoints ChaosWebhooks.start created, by organization id (for the traffic below). */
const endpointsByOrg = new Map<string, string[]>();

interface ActionContext {
  orgs: { id: string }[];
  stats: { count(action: string, outcome: string): void };
  send(org: never, method: string, path: string, opts?: { body?: string; key?: string; session?: boolean }): Promise<{ status: number; body: string } | undefined>;
}

const pickOne = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)];

/** A webhook route an organization's owner calls on one of its endpoints (a 5xx is a problem, as for every action). */
function webhookAction(name: string, weight: number, request: (endpointId: string, deliveryId: string | undefined) => { method: string; path: string; body?: object; keyed?: boolean }) {
  return {
    name,
    weight,
    async run(ctx: ActionContext): Promise<void> {
      const org = pickOne(ctx.orgs);
      const ids = endpointsByOrg.get(org.id);
      if (!ids) return;
      const endpointId = pickOne(ids);
      let deliveryId: string | undefined;
      if (name === 'webhook_redeliver') {
        const list = await ctx.send(org as never, 'GET', `/v1/webhook-endpoints/${endpointId}/deliveries?limit=5`, { session: true });
        deliveryId = list?.status === 200 ? (JSON.parse(list.body) as { deliveries: { id: string }[] }).deliveries[0]?.id : undefined;
        if (!deliveryId) return;
      }
      const r = request(endpointId, deliveryId);
      const reply = await ctx.send(org as never, r.method, r.path, { session: true, body: r.body ? JSON.stringify(r.body) : undefined, key: r.keyed ? `chaos-${Math.random()}` : undefined });
      ctx.stats.count(name, reply ? String(reply.status) : 'cut_by_kill');
    },
  };
}

/** The webhook routes in the chaos run's traffic mix. */
export const WEBHOOK_ACTIONS = [
  webhookAction('webhook_test', 3, (id) => ({ method: 'POST', path: `/v1/webhook-endpoints/${id}/test`, keyed: true })),
  webhookAction('webhook_deliveries', 3, (id) => ({ method: 'GET', path: `/v1/webhook-endpoints/${id}/deliveries?status=${pickOne(['pending', 'succeeded', 'failed'])}` })),
  webhookAction('webhook_redeliver', 2, (id, deliveryId) => ({ method: 'POST', path: `/v1/webhook-endpoints/${id}/deliveries/${deliveryId}/redeliver` })),
  webhookAction('webhook_update', 1, (id) => ({ method: 'PATCH', path: `/v1/webhook-endpoints/${id}`, body: { description: `chaos ${Math.floor(Math.random() * 3)}` } })),
  webhookAction('webhook_rotate', 1, (id) => ({ method: 'POST', path: `/v1/webhook-endpoints/${id}/rotate-secret` })),
];
