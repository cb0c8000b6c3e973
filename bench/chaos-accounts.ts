import { randomBytes, randomUUID } from 'node:crypto';

/**
 * Chaos traffic of accounts.md, registered in chaos.ts's ACTIONS: concurrent accepts of one
 * invitation (at most one may join), and organization creates at the 10-per-user limit (never
 * more than 10), while processes are killed and backends terminated. What the action needs of
 * chaos.ts's context is declared here (structural types), so chaos.ts only imports and spreads.
 */
interface Reply {
  status: number;
  body: string;
}
interface AccountsOrg {
  id: string;
  token: string;
  session: string;
}
interface AccountsContext {
  orgs: AccountsOrg[];
  stats: { count(action: string, outcome: string): void; problem(text: string): void };
  send(org: AccountsOrg, method: string, path: string, opts?: { body?: string; key?: string; session?: boolean; bearer?: string }): Promise<Reply | undefined>;
}

const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)];
const outcome = (r: Reply | undefined) => (r ? String(r.status) : 'cut_by_kill');

/** A new user of its own (signup creates their personal organization); undefined when a kill cut the answer. */
async function newUser(ctx: AccountsContext, org: AccountsOrg, action: string): Promise<{ email: string; session: string } | undefined> {
  const email = `${action}-${randomUUID().slice(0, 12)}@chaos.test`;
  const body = JSON.stringify({ email, password: randomBytes(18).toString('base64'), organization_name: email });
  const reply = await ctx.send(org, 'POST', '/v1/auth/signup', { body });
  ctx.stats.count(`${action}:signup`, outcome(reply));
  if (reply?.status !== 201) return undefined;
  return { email, session: (JSON.parse(reply.body) as { token: string }).token };
}

export const ACCOUNT_ACTIONS = [
  {
    // An owner invites a new user, who sends 5 accepts of the token at once (to any processes):
    // at most one 200; the others 404. Cut answers may have joined: then none may say 200 twice.
    name: 'invitation_accept_race',
    weight: 1,
    async run(ctx: AccountsContext): Promise<void> {
      const org = pick(ctx.orgs);
      const user = await newUser(ctx, org, 'invitation_accept_race');
      if (!user) return;
      const invited = await ctx.send(org, 'POST', '/v1/invitations', { body: JSON.stringify({ email: user.email, role: pick(['viewer', 'developer']) }), key: randomUUID(), session: true });
      ctx.stats.count('invitation_create', outcome(invited));
      if (invited?.status !== 201) return;
      const token = (JSON.parse(invited.body) as { token: string }).token;
      const replies = await Promise.all(Array.from({ length: 5 }, () => ctx.send(org, 'POST', '/v1/invitations/accept', { body: JSON.stringify({ token }), bearer: user.session })));
      for (const r of replies) ctx.stats.count('invitation_accept_race', outcome(r));
      const joined = replies.filter((r) => r?.status === 200).length;
      const unexpected = replies.filter((r) => r && r.status !== 200 && r.status !== 404);
      if (joined > 1) ctx.stats.problem(`one invitation of ${org.id} accepted ${joined} times (200 each)`);
      for (const r of unexpected) ctx.stats.problem(`accept of one invitation of ${org.id} answered ${r!.status} ${r!.body.slice(0, 160)}`);
      if (joined === 0 && replies.every((r) => r !== undefined)) ctx.stats.problem(`no accept of an invitation of ${org.id} succeeded: ${replies.map((r) => r!.status).join(',')}`);
      const list = await ctx.send(org, 'GET', '/v1/organizations', { bearer: user.session });
      if (list?.status === 200) {
        const ids = (JSON.parse(list.body) as { organizations: { id: string }[] }).organizations.map((o) => o.id);
        if (ids.filter((id) => id === org.id).length !== 1 && joined === 1) ctx.stats.problem(`an accepted invitation of ${org.id} left its user outside it: ${ids.join(',')}`);
      }
    },
  },
  {
    // A new user (1 organization) creates organizations 4 at a time until refused: every answer
    // is 201 or 409 quota_exceeded, and the user never belongs to more than 10.
    name: 'organization_create_at_limit',
    weight: 1,
    async run(ctx: AccountsContext): Promise<void> {
      const org = pick(ctx.orgs);
      const user = await newUser(ctx, org, 'organization_create_at_limit');
      if (!user) return;
      for (let round = 0; round < 4; round++) {
        const replies = await Promise.all(
          Array.from({ length: 4 }, (_, i) => ctx.send(org, 'POST', '/v1/organizations', { body: JSON.stringify({ name: `limit ${round}.${i}` }), bearer: user.session })),
        );
        for (const r of replies) {
          ctx.stats.count('organization_create_at_limit', outcome(r));
          if (r && r.status !== 201 && !(r.status === 409 && r.body.includes('quota_exceeded'))) ctx.stats.problem(`POST /v1/organizations answered ${r.status} ${r.body.slice(0, 160)}`);
        }
        if (replies.some((r) => r?.status === 409)) break;
      }
      const list = await ctx.send(org, 'GET', '/v1/organizations', { bearer: user.session });
      ctx.stats.count('organization_list', outcome(list));
      if (list?.status === 200) {
        const n = (JSON.parse(list.body) as { organizations: unknown[] }).organizations.length;
        if (n > 10) ctx.stats.problem(`a user belongs to ${n} organizations, over the limit of 10`);
      }
    },
  },
];
