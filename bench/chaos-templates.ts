/**
 * The chaos run's traffic on templates and deployments: one unfinished template operation per
 * server and one deployment of a template per server must hold whatever process answers and
 * whatever is killed, and no answer may carry a secret variable's value.
 *
 * - template_deploy: two deploys at once on the organization's server (the same template, or two
 *   of them), each with its Idempotency-Key and sent again: at most one 202 per server at a time;
 *   every refusal is 409 invalid_state naming an operation, 409 conflict naming the deployment,
 *   409 quota_exceeded or 503; a replay answers byte for byte as its original.
 * - template_action: update (merging, sometimes a new secret), health or remove of one of the
 *   organization's deployments: 202, 409 invalid_state (the server busy, the deployment not in a
 *   state for it) or 503.
 * - read_deployments: GET /v1/deployments (filters) and one deployment.
 *
 * Every 202's operation is recorded, so the run checks that it ends.
 */
import { randomUUID } from 'node:crypto';

interface Org {
  id: string;
  server: string;
}

interface Reply {
  status: number;
  body: string;
}

interface Context<O extends Org> {
  orgs: O[];
  stats: { count(action: string, outcome: string): void; problem(text: string): void; accepted: Set<string> };
  send(org: O, method: string, path: string, opts?: { body?: string; key?: string }): Promise<Reply | undefined>;
}

/** The seed's templates for the chaos run (`sick` answers health checks unhealthy, `broken` fails every install). */
export const CHAOS_TEMPLATES = [
  {
    id: 'postgres',
    name: 'PostgreSQL',
    versions: ['15', '16'],
    variables: [
      { name: 'password', description: 'superuser password', required: true, secret: true },
      { name: 'database', description: 'a database to create', required: false, secret: false },
    ],
  },
  { id: 'redis', name: 'Redis', versions: ['7.2', '7.4'], variables: [{ name: 'password', description: 'requirepass', required: false, secret: true }] },
  { id: 'sick', name: 'Sick', versions: ['1'], variables: [], simulate: { deploy: 'ok', health: 'unhealthy' } },
  { id: 'broken', name: 'Broken', versions: ['1'], variables: [], simulate: { deploy: 'fail', health: 'healthy' } },
];

const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)];
/** A secret value the run can search for in answers. */
const secret = (): string => `chaos-secret-${randomUUID()}`;

const errorOf = (r: Reply): { code?: string; operation_id?: string; existing_id?: string } => {
  try {
    const e = (JSON.parse(r.body) as { error?: { code: string; details: { operation_id?: string; existing_id?: string } } }).error;
    return e ? { code: e.code, ...e.details } : {};
  } catch {
    return {};
  }
};

function deployBody(template: string): string {
  const variables: Record<string, string> =
    template === 'postgres' ? { password: secret(), ...(Math.random() < 0.5 ? { database: 'app' } : {}) } : template === 'redis' && Math.random() < 0.5 ? { password: secret() } : {};
  return JSON.stringify({ template, ...(Math.random() < 0.3 ? { version: pick(CHAOS_TEMPLATES.find((t) => t.id === template)!.versions) } : {}), variables });
}

/** Checks one answer of a deployment action; records its operation when accepted. */
function judge<O extends Org>(ctx: Context<O>, action: string, r: Reply | undefined, sent: string | undefined): void {
  ctx.stats.count(action, r ? String(r.status) : 'cut_by_kill');
  if (!r) return;
  for (const m of (sent ?? '').match(/chaos-secret-[0-9a-f-]+/g) ?? []) if (r.body.includes(m)) ctx.stats.problem(`${action} answered a secret value: ${r.status}`);
  if (r.status === 202) {
    const opId = (JSON.parse(r.body) as { operation?: { id?: string } }).operation?.id;
    if (opId) ctx.stats.accepted.add(opId);
    else ctx.stats.problem(`${action}: 202 without an operation id`);
    return;
  }
  const e = errorOf(r);
  const expected =
    (r.status === 409 && ((e.code === 'invalid_state') || (e.code === 'conflict' && e.existing_id) || e.code === 'quota_exceeded')) ||
    (r.status === 503 && e.code === 'provider_unavailable') ||
    (r.status === 404 && e.code === 'not_found' && action !== 'template_deploy');
  if (!expected) ctx.stats.problem(`${action} answered ${r.status} ${r.body.slice(0, 160)}`);
}

/** Two accepted template operations of one server: a problem when both were unfinished at one moment. */
async function judgeOverlap<O extends Org>(ctx: Context<O>, org: O, accepted: Reply[]): Promise<void> {
  const lives: { start: number; end: number }[] = [];
  for (const r of accepted) {
    const id = (JSON.parse(r.body) as { operation?: { id?: string } }).operation?.id;
    const got = id ? await ctx.send(org, 'GET', `/v1/operations/${id}`) : undefined;
    if (!got || got.status !== 200) return; // cut by a kill: the end-of-run verify still checks one unfinished operation per server
    const op = JSON.parse(got.body) as { created_at: string; finished_at: string | null };
    lives.push({ start: Date.parse(op.created_at), end: op.finished_at ? Date.parse(op.finished_at) : Infinity });
  }
  const [a, b] = lives;
  if (a.start < b.end && b.start < a.end) ctx.stats.problem(`two template operations unfinished at once on ${org.server}`);
}

export function templateActions<O extends Org>(): { name: string; weight: number; run(ctx: Context<O>): Promise<void> }[] {
  return [
    {
      name: 'template_deploy',
      weight: 3,
      async run(ctx) {
        const org = pick(ctx.orgs);
        const templates = Math.random() < 0.5 ? [pick(CHAOS_TEMPLATES).id, pick(CHAOS_TEMPLATES).id] : Array(2).fill(pick(CHAOS_TEMPLATES).id);
        const sent = templates.map((t) => ({ key: randomUUID(), body: deployBody(t) }));
        const replies = await Promise.all(sent.map((s) => ctx.send(org, 'POST', `/v1/servers/${org.server}/deployments`, s)));
        replies.forEach((r, i) => judge(ctx, 'template_deploy', r, sent[i].body));
        const accepted = replies.filter((r) => r?.status === 202);
        // Both may be accepted when the first operation had ended before the second was accepted
        // (a request retried after a kill arrives late): a problem only when their lives overlap.
        if (accepted.length > 1) await judgeOverlap(ctx, org, accepted as Reply[]);
        // Each sent again with its key: the stored answer (a 503 is not stored: it may now be anything).
        for (const [i, s] of sent.entries()) {
          const original = replies[i];
          if (!original || original.status === 503) continue;
          const again = await ctx.send(org, 'POST', `/v1/servers/${org.server}/deployments`, s);
          ctx.stats.count('template_deploy_replay', again ? String(again.status) : 'cut_by_kill');
          if (again && (again.status !== original.status || again.body !== original.body)) {
            ctx.stats.problem(`deploy replay on ${org.server} differs: ${original.status} then ${again.status} ${again.body.slice(0, 120)}`);
          }
        }
      },
    },
    {
      name: 'template_action',
      weight: 3,
      async run(ctx) {
        const org = pick(ctx.orgs);
        const listed = await ctx.send(org, 'GET', `/v1/deployments?server_id=${org.server}`);
        if (listed?.status !== 200) return;
        const deployments = (JSON.parse(listed.body) as { deployments: { id: string; template: string; status: string }[] }).deployments;
        if (deployments.length === 0) return;
        const d = pick(deployments);
        const kind = pick(['update', 'update', 'health', 'health', 'remove']);
        let body: string | undefined;
        if (kind === 'update') {
          const t = CHAOS_TEMPLATES.find((x) => x.id === d.template)!;
          const variables: Record<string, string | null> = {};
          if (t.id === 'postgres' && Math.random() < 0.5) variables.password = secret();
          if (t.id === 'postgres' && Math.random() < 0.3) variables.database = Math.random() < 0.5 ? null : 'app2';
          body = JSON.stringify({ ...(Math.random() < 0.5 ? { version: pick(t.versions) } : {}), ...(Object.keys(variables).length > 0 ? { variables } : {}) });
        }
        const path = kind === 'remove' ? `/v1/deployments/${d.id}` : `/v1/deployments/${d.id}/${kind}`;
        const reply = await ctx.send(org, kind === 'remove' ? 'DELETE' : 'POST', path, { body, key: randomUUID() });
        judge(ctx, `template_${kind}`, reply, body);
      },
    },
    {
      name: 'read_deployments',
      weight: 2,
      async run(ctx) {
        const org = pick(ctx.orgs);
        const q = pick(['', `?server_id=${org.server}`, '?status=removed', '?status=active&limit=5', '?status=failed']);
        const reply = await ctx.send(org, 'GET', `/v1/deployments${q}`);
        ctx.stats.count('read_deployments', reply ? String(reply.status) : 'cut_by_kill');
        if (reply && reply.status !== 200) ctx.stats.problem(`GET /v1/deployments${q} answered ${reply.status}`);
        if (reply?.status === 200) {
          if (/chaos-secret-/.test(reply.body)) ctx.stats.problem('GET /v1/deployments answered a secret value');
          const first = (JSON.parse(reply.body) as { deployments: { id: string }[] }).deployments[0];
          if (first) {
            const one = await ctx.send(org, 'GET', `/v1/deployments/${first.id}`);
            ctx.stats.count('read_deployment', one ? String(one.status) : 'cut_by_kill');
            if (one && one.status !== 200) ctx.stats.problem(`GET /v1/deployments/${first.id} answered ${one.status}`);
          }
        }
      },
    },
  ];
}
