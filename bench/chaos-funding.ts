/**
 * The chaos run's wallet top-up traffic (bench/chaos.ts registers FUNDING_ACTIONS and gives its
 * servers FUNDING_SERVER_ENV): keyed top-ups paid or canceled on the simulated provider's
 * checkout page (its form posts), API cancels, and provider events forged with the shared
 * webhook secret: a paid event re-sent 3 times at once and again under a new id, and `expired`
 * arriving before `completed`. Problems: a replay that differs from the original 201, a top-up
 * not `succeeded` after its paid event was answered 200, a top-up credited by a cancel. Credits
 * against paid top-ups are checked at the end by `verify` (top_ups.credited_once,
 * wallet.ledger_chain).
 *
 * Billing staff race the customers on the admin listener: a paid top-up refunded (whole or in
 * part, the request repeated with its key) while the organization buys a disk, and wallet debit
 * adjustments against purchases. Problems: a refund or debit answered other than 201 or 409, a
 * repeated refund answering another refund, a refunded top-up whose refunded_amount does not
 * cover the refund, a refund the simulated provider refused. Each refund debited once and within
 * its top-up, and available never below zero, are checked at the end by `verify`
 * (top_ups.refunds_debited_once, top_ups.refunded_within_amount, wallet.available_matches_ledger).
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
  id: string;
  session: string;
}

/** What of chaos.ts's Context these actions use. */
interface FundingContext<O extends FundingOrg> {
  orgs: O[];
  /** The admin listener is reachable (billing staff's actions run only then). */
  staff?: boolean;
  stats: { count(action: string, outcome: string): void; problem(text: string): void };
  send(org: O, method: string, path: string, opts?: { body?: string; key?: string; session?: boolean; headers?: Record<string, string>; admin?: boolean }): Promise<Reply | undefined>;
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
  {
    // A paid top-up refunded by billing staff (in part or whole; the request repeated with its key) while the organization buys a disk.
    name: 'refund_racing_purchase',
    weight: 2,
    async run<O extends FundingOrg>(ctx: FundingContext<O>): Promise<void> {
      if (!ctx.staff) return;
      const org = pick(ctx.orgs);
      const topUp = await keyedTopUp(ctx, org, 'top_up_create');
      if (!topUp) return;
      const paid = await ctx.send(org, 'POST', `/checkout/${sessionOf(topUp)}/pay`);
      if (!paid || (await statusOf(ctx, org, topUp.id)) !== 'succeeded') return;
      const part = Math.random() < 0.5;
      const body = JSON.stringify({ reason: 'chaos refund', ...(part ? { amount: topUp.currency === 'USD' ? '1.00' : '10000' } : {}) });
      const key = randomUUID();
      const refund = () => ctx.send(org, 'POST', `/admin/v1/top-ups/${topUp.id}/refund`, { body, key, admin: true, headers: { 'X-Justification': 'CHAOS' } });
      const buy = JSON.stringify({ name: `rf-${randomUUID().slice(0, 8)}`, region: 'id-jkt', size_gb: 10, term_months: 1, currency: topUp.currency });
      const [first, purchase] = await Promise.all([refund(), ctx.send(org, 'POST', '/v1/volumes', { body: buy, key: randomUUID() })]);
      ctx.stats.count('refund', first ? String(first.status) : 'cut_by_kill');
      ctx.stats.count('refund_racing_purchase', purchase ? String(purchase.status) : 'cut_by_kill');
      if (first && first.status !== 201 && first.status !== 409) ctx.stats.problem(`refund of ${topUp.id} answered ${first.status} ${first.body.slice(0, 200)}`);
      const again = await refund();
      ctx.stats.count('refund_repeat_key', again ? String(again.status) : 'cut_by_kill');
      for (const r of [first, again]) {
        if (!r || r.status !== 201) continue;
        const made = JSON.parse(r.body) as { refund: { id: string; status: string; amount: string }; top_up: { refunded_amount: string; status: string } };
        if (made.refund.status === 'failed') ctx.stats.problem(`refund ${made.refund.id} of ${topUp.id} was refused by the simulated provider: ${r.body.slice(0, 200)}`);
        if (Number(made.top_up.refunded_amount) < Number(made.refund.amount)) ctx.stats.problem(`top-up ${topUp.id} shows refunded_amount ${made.top_up.refunded_amount} below its refund ${made.refund.amount}`);
      }
      if (first?.status === 201 && again?.status === 201 && (JSON.parse(first.body) as { refund: { id: string } }).refund.id !== (JSON.parse(again.body) as { refund: { id: string } }).refund.id) {
        ctx.stats.problem(`refund of ${topUp.id} repeated with key ${key} answered another refund`);
      }
    },
  },
  {
    // A debit adjustment by billing staff while the organization buys: available never below zero (409 when it does not cover it).
    name: 'adjustment_racing_purchase',
    weight: 2,
    async run<O extends FundingOrg>(ctx: FundingContext<O>): Promise<void> {
      if (!ctx.staff) return;
      const org = pick(ctx.orgs);
      const currency = pick(['USD', 'IDR'] as const);
      const amount = currency === 'USD' ? pick(['0.50', '2.00', '50.00']) : pick(['5000', '20000']);
      const direction = Math.random() < 0.7 ? 'debit' : 'credit';
      const buy = JSON.stringify({ name: `ad-${randomUUID().slice(0, 8)}`, region: 'id-jkt', size_gb: 10, term_months: 1, currency });
      const [adjusted, purchase] = await Promise.all([
        ctx.send(org, 'POST', `/admin/v1/organizations/${org.id}/wallet/adjustments`, {
          body: JSON.stringify({ currency, amount, direction, reason: 'chaos adjustment' }),
          key: randomUUID(),
          admin: true,
          headers: { 'X-Justification': 'CHAOS' },
        }),
        ctx.send(org, 'POST', '/v1/volumes', { body: buy, key: randomUUID() }),
      ]);
      ctx.stats.count(`adjustment_${direction}`, adjusted ? String(adjusted.status) : 'cut_by_kill');
      ctx.stats.count('adjustment_racing_purchase', purchase ? String(purchase.status) : 'cut_by_kill');
      if (adjusted && adjusted.status !== 201 && !(direction === 'debit' && adjusted.status === 409)) {
        ctx.stats.problem(`adjustment ${direction} of ${amount} ${currency} answered ${adjusted.status} ${adjusted.body.slice(0, 200)}`);
      }
    },
  },
];
