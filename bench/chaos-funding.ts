/**
 * The chaos run's wallet top-up traffic (bench/chaos.ts registers FUNDING_ACTIONS and gives its
 * servers FUNDING_SERVER_ENV): keyed top-ups paid or canceled on the simulated provider's
 * checkout page (its form posts), API cancels, and provider events forged with the shared
 * webhook secret: a paid event re-sent 3 times at once and again under a new id, and `expired`
 * arriving before `completed`. Problems: a replay that differs from the original 201, a top-up
 * not `succeeded` after its paid event was answered 200, a top-up credited by a cancel. Credits
 * against paid top-ups are checked at the end by `verify` (top_ups.credited_once,
 * wallet.ledger_chain).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { stripeSignatureHeader } from '../src/modules/funding/domain/stripe-signature';

/** The secret every server process signs and verifies the simulated provider's events with. */
export const FUNDING_SECRET = `whsec_chaos_${randomBytes(12).toString('hex')}`;

export const FUNDING_SERVER_ENV: Record<string, string> = { PAYMENT_PROVIDER: 'simulated', PAYMENT_PROVIDER_WEBHOOK_SECRET: FUNDING_SECRET };

interface Reply {
  status: number;
  body: string;
}

interface FundingOrg {
  session: string;
}

/** What of chaos.ts's Context these actions use. */
interface FundingContext<O extends FundingOrg> {
  orgs: O[];
  stats: { count(action: string, outcome: string): void; problem(text: string): void };
  send(org: O, method: string, path: string, opts?: { body?: string; key?: string; session?: boolean; headers?: Record<string, string> }): Promise<Reply | undefined>;
}

const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)];

interface TopUpJson {
  id: string;
  status: string;
  amount: string;
  currency: 'USD' | 'IDR';
  checkout_url: string | null;
}

const topUpBody = (): string =>
  Math.random() < 0.5
    ? JSON.stringify({ amount: `${5 + Math.floor(Math.random() * 50)}.${pick(['00', '50', '25'])}`, currency: 'USD' })
    : JSON.stringify({ amount: String(10_000 + Math.floor(Math.random() * 200) * 1000), currency: 'IDR' });

/** A keyed top-up by the owner's session (billing is an admin's), repeated with the same key: the replay must be the same 201. */
async function keyedTopUp<O extends FundingOrg>(ctx: FundingContext<O>, org: O, action: string): Promise<TopUpJson | undefined> {
  const key = randomUUID();
  const body = topUpBody();
  const reply = await ctx.send(org, 'POST', '/v1/wallet/top-ups', { body, key, session: true });
  ctx.stats.count(action, reply ? String(reply.status) : 'cut_by_kill');
  if (!reply || reply.status !== 201) return undefined;
  const again = await ctx.send(org, 'POST', '/v1/wallet/top-ups', { body, key, session: true });
  if (again && (again.status !== 201 || again.body !== reply.body)) {
    ctx.stats.problem(`top-up replay of key ${key} answered ${again.status} ${again.body.slice(0, 120)}; the original was 201 ${reply.body.slice(0, 120)}`);
  }
  return (JSON.parse(reply.body) as { top_up: TopUpJson }).top_up;
}

const sessionOf = (t: TopUpJson): string => new URL(t.checkout_url!).pathname.split('/')[2];

async function statusOf<O extends FundingOrg>(ctx: FundingContext<O>, org: O, id: string): Promise<string | undefined> {
  const r = await ctx.send(org, 'GET', `/v1/wallet/top-ups/${id}`, { session: true });
  return r && r.status === 200 ? (JSON.parse(r.body) as TopUpJson).status : undefined;
}

/** A checkout.session.* event of the top-up, in the simulated provider's shape (Stripe's units). */
function event(t: TopUpJson, type: string, id = `evt_sim_chaos${randomBytes(10).toString('hex')}`): string {
  const minor = t.currency === 'USD' ? BigInt(t.amount.replace('.', '')) / 1000n : BigInt(t.amount) * 100n;
  return JSON.stringify({
    id,
    object: 'event',
    type,
    created: Math.floor(Date.now() / 1000),
    data: {
      object: {
        id: sessionOf(t),
        object: 'checkout.session',
        client_reference_id: t.id,
        amount_total: Number(minor),
        currency: t.currency.toLowerCase(),
        payment_status: type === 'checkout.session.completed' ? 'paid' : 'unpaid',
        status: 'complete',
      },
    },
  });
}

function deliver<O extends FundingOrg>(ctx: FundingContext<O>, org: O, body: string): Promise<Reply | undefined> {
  const signature = stripeSignatureHeader(FUNDING_SECRET, Math.floor(Date.now() / 1000), body);
  return ctx.send(org, 'POST', '/v1/payment-events/simulated', { body, headers: { 'Stripe-Signature': signature } });
}

export const FUNDING_ACTIONS = [
  {
    // Half paid, half canceled on the checkout page, as a customer's browser posts its forms.
    name: 'top_up_checkout',
    weight: 3,
    async run<O extends FundingOrg>(ctx: FundingContext<O>): Promise<void> {
      const org = pick(ctx.orgs);
      const topUp = await keyedTopUp(ctx, org, 'top_up_checkout');
      if (!topUp) return;
      const pay = Math.random() < 0.5;
      const reply = await ctx.send(org, 'POST', `/checkout/${sessionOf(topUp)}/${pay ? 'pay' : 'cancel'}`);
      ctx.stats.count(pay ? 'checkout_pay' : 'checkout_cancel', reply ? String(reply.status) : 'cut_by_kill');
      if (!pay && reply?.status === 200 && (await statusOf(ctx, org, topUp.id)) === 'succeeded') {
        ctx.stats.problem(`top-up ${topUp.id} canceled on the checkout page but succeeded`);
      }
    },
  },
  {
    name: 'top_up_cancel_api',
    weight: 1,
    async run<O extends FundingOrg>(ctx: FundingContext<O>): Promise<void> {
      const org = pick(ctx.orgs);
      const topUp = await keyedTopUp(ctx, org, 'top_up_create');
      if (!topUp) return;
      const reply = await ctx.send(org, 'POST', `/v1/wallet/top-ups/${topUp.id}/cancel`, { key: randomUUID(), session: true });
      ctx.stats.count('top_up_cancel_api', reply ? String(reply.status) : 'cut_by_kill');
    },
  },
  {
    // A paid event 3 times at once and again under a new id; a third of the time `expired` first.
    name: 'payment_events_replayed',
    weight: 2,
    async run<O extends FundingOrg>(ctx: FundingContext<O>): Promise<void> {
      const org = pick(ctx.orgs);
      const topUp = await keyedTopUp(ctx, org, 'top_up_create');
      if (!topUp) return;
      if (Math.random() < 0.33) {
        const expired = await deliver(ctx, org, event(topUp, 'checkout.session.expired'));
        ctx.stats.count('payment_event_expired_first', expired ? String(expired.status) : 'cut_by_kill');
      }
      const paid = event(topUp, 'checkout.session.completed');
      const replies = await Promise.all([deliver(ctx, org, paid), deliver(ctx, org, paid), deliver(ctx, org, paid), deliver(ctx, org, event(topUp, 'checkout.session.completed'))]);
      for (const r of replies) ctx.stats.count('payment_event', r ? String(r.status) : 'cut_by_kill');
      if (replies.some((r) => r?.status === 200)) {
        const status = await statusOf(ctx, org, topUp.id);
        if (status !== undefined && status !== 'succeeded') ctx.stats.problem(`top-up ${topUp.id} is ${status} after its paid event was answered 200`);
      }
      for (const r of replies) if (r && r.status === 400) ctx.stats.problem(`a correctly signed payment event was refused: ${r.body.slice(0, 200)}`);
    },
  },
];
