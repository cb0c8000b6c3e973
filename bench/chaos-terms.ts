/**
 * Terms that end during the chaos run (terms.md "verify, chaos, bench"): four organizations of
 * their own, seeded after the traffic's, whose disks and bought servers expire seconds into the
 * run, under the same kills, backend terminations and provider faults as the rest:
 *
 * - `org_terms1`, a full wallet, auto-renew on: renewed before `expires_at` (AUTO_RENEW_LEAD_S
 *   ahead), charged once per term end;
 * - `org_terms2`, a full wallet, auto-renew off: notices, suspended at `expires_at`, released at
 *   `release_at` (retention of seconds) unless the traffic's renewals of its resources win first;
 * - `org_terms3`, an empty wallet, auto-renew on: every attempt fails (insufficient_balance),
 *   suspended at `expires_at`, then released;
 * - `org_terms4`, an empty wallet credited by billing staff during the run (an adjustment through
 *   the admin API), auto-renew on: the credit wakes the failed attempt up.
 *
 * The servers of the run get short term settings (TERMS_SERVER_ENV). After the run, check()
 * reads every one of these resources: each is renewed (its `expires_at` later than the seeded
 * one), suspended or released, none live past `expires_at` + TERM_SWEEP_MS + 60 s without a
 * renewal (verify's terms checks say the same, and each charge once); the counts go into the summary.
 */
import type { Client } from 'pg';
import type { Action, Context, Org } from './chaos';

/** Seconds: the sweep every second, auto-renew 8 s ahead (retried after 6 s), notices 12 and 4 s ahead, 15 s of retention. */
export const TERMS_SERVER_ENV = {
  TERM_SWEEP_MS: '1000',
  AUTO_RENEW_LEAD_S: '8',
  AUTO_RENEW_RETRY_S: '6',
  EXPIRY_NOTICES_S: '12,4',
  VOLUME_RETENTION_S: '15',
  SERVER_RETENTION_S: '15',
};

const TERMS_ORGS = 4;
const VOLUMES_EACH = 6;
const SERVERS_EACH = 2;

/** The organizations of this part, once seeded (tokens from the seed's output). */
const termsOrgs: Org[] = [];
/** Each resource's seeded `expires_at`. */
const seededExpiry = new Map<string, number>();

/**
 * The seed file of the four organizations: their resources expire between 15 s and
 * `horizonS` - 15 s after `startMs` (the traffic's start, about), spread evenly.
 */
export function termsSeedFile(startMs: number, horizonS: number): object {
  const span = Math.max(5, horizonS - 30);
  const at = (k: number, n: number): string => new Date(startMs + (15 + (span * k) / n) * 1000).toISOString();
  return {
    regions: [],
    organizations: Array.from({ length: TERMS_ORGS }, (_, i) => {
      const o = i + 1;
      const autoRenew = o !== 2 ? { enabled: true } : { enabled: false };
      const wallet = o <= 2 ? { USD: '5000.00000', IDR: '80000000' } : { USD: '0', IDR: '0' };
      return {
        id: `org_terms${o}`,
        name: `Terms ${o}`,
        wallet,
        members: [],
        api_keys: [{ name: 'terms', scopes: ['vm:read', 'vm:write', 'billing:read'] }],
        servers: Array.from({ length: SERVERS_EACH }, (_, s) => ({
          id: `vm_terms${o}s${s + 1}`,
          name: `t-${s + 1}`,
          region: 'id-jkt',
          zone: 'id-jkt-a',
          plan: 'cx1',
          image: 'debian-12',
          term_months: 1,
          currency: s % 2 === 0 ? 'USD' : 'IDR',
          expires_at: at(s, SERVERS_EACH),
          auto_renew: autoRenew,
        })),
        volumes: Array.from({ length: VOLUMES_EACH }, (_, v) => ({
          id: `vol_terms${o}v${v + 1}`,
          name: `t-${v + 1}`,
          type: 'premium',
          region: 'id-jkt',
          zone: 'id-jkt-a',
          size_gb: 10,
          term_months: 1,
          currency: v % 2 === 0 ? 'USD' : 'IDR',
          expires_at: at(v, VOLUMES_EACH),
          auto_renew: autoRenew,
          // The first disk of each is on the org's first server: a suspension detaches it.
          ...(v === 0 ? { server: `vm_terms${o}s1`, mount_path: '/mnt/t' } : {}),
        })),
      };
    }),
  };
}

/** Records the seed's output: the organizations (for the traffic's renewals) and every seeded expiry. */
export function termsSeeded(output: { organizations: { id: string; api_keys: { token: string }[]; servers: string[]; volumes: string[] }[] }, file: object): void {
  for (const o of output.organizations) termsOrgs.push({ id: o.id, token: o.api_keys[0].token, session: '', volumes: o.volumes, server: o.servers[0], doomed: [] });
  for (const o of (file as { organizations: { servers: { id: string; expires_at: string }[]; volumes: { id: string; expires_at: string }[] }[] }).organizations) {
    for (const r of [...o.servers, ...o.volumes]) seededExpiry.set(r.id, Date.parse(r.expires_at));
  }
}

const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)];

/**
 * The traffic's part: customers renewing their expiring (or suspended) resources by hand,
 * racing the sweep's suspension and release; and billing staff crediting org_terms4's wallet
 * once (which wakes its failed automatic renewals up).
 */
export const TERMS_ACTIONS: Action[] = [
  {
    name: 'terms_renew',
    weight: 2,
    async run(ctx: Context): Promise<void> {
      if (termsOrgs.length === 0) return;
      // org_terms2 (no auto-renew) and org_terms3 (empty wallet: 402) are the interesting ones.
      const org = pick(termsOrgs.filter((o) => o.id === 'org_terms2' || o.id === 'org_terms3'));
      const server = Math.random() < 0.3;
      const id = server ? `vm_${org.id.slice(4)}s${1 + Math.floor(Math.random() * SERVERS_EACH)}` : pick(org.volumes);
      const r = await ctx.send(org, 'POST', `/v1/${server ? 'servers' : 'volumes'}/${id}/renew`, { body: JSON.stringify({ term_months: 1 }), key: `terms-${id}-${Math.random()}` });
      ctx.stats.count('terms_renew', r ? String(r.status) : 'cut_by_kill');
      if (!r) return;
      if (r.status === 202) {
        const opId = (JSON.parse(r.body) as { operation?: { id?: string } }).operation?.id;
        if (opId) ctx.stats.accepted.add(opId);
        return;
      }
      // 402 (the empty wallet), 409 invalid_state (deleting, released, or another operation runs), 404 (released and purged never happens: 409).
      if (![402, 409].includes(r.status)) ctx.stats.problem(`terms_renew of ${id} answered ${r.status} ${r.body.slice(0, 200)}`);
    },
  },
  {
    name: 'terms_credit',
    weight: 0.2,
    async run(ctx: Context): Promise<void> {
      const org = termsOrgs.find((o) => o.id === 'org_terms4');
      if (!org || !ctx.staff) return;
      const currency = pick(['USD', 'IDR']);
      const r = await ctx.send(org, 'POST', '/admin/v1/organizations/org_terms4/wallet/adjustments', {
        admin: true,
        key: `terms-credit-${Math.random()}`,
        headers: { 'X-Justification': 'CHAOS-TERMS' },
        body: JSON.stringify({ currency, amount: currency === 'USD' ? '20.00000' : '200000', direction: 'credit', reason: 'Chaos: wake the auto-renewals' }),
      });
      ctx.stats.count('terms_credit', r ? String(r.status) : 'cut_by_kill');
      if (r && r.status !== 201 && r.status !== 200) ctx.stats.problem(`terms_credit answered ${r.status} ${r.body.slice(0, 200)}`);
    },
  },
];

/**
 * After the run: every expiring resource is renewed, suspended or released; a resource whose
 * seeded `expires_at` passed more than `graceMs` ago that is still live, unrenewed and unsuspended
 * is a missed deadline (a problem). Returns the counts for the summary.
 */
export async function checkTerms(db: Client, graceMs: number, problem: (text: string) => void): Promise<Record<string, number>> {
  const rows = (
    await db.query<{ id: string; status: string; expires_at: Date | null; deleted_reason: string | null }>(
      `SELECT id, status, expires_at, deleted_reason FROM volumes WHERE org_id LIKE 'org_terms%'
       UNION ALL SELECT id, status, expires_at, deleted_reason FROM servers WHERE org_id LIKE 'org_terms%'`,
    )
  ).rows;
  const counts: Record<string, number> = { renewed: 0, suspended: 0, released: 0, not_due_yet: 0 };
  const now = Date.now();
  for (const r of rows) {
    const seeded = seededExpiry.get(r.id);
    if (seeded === undefined) continue;
    if (r.status === 'deleted' || r.status === 'deleting') {
      counts.released += 1;
      if (r.status === 'deleted' && r.deleted_reason !== 'expired') problem(`${r.id} was deleted with reason ${r.deleted_reason ?? 'none'}, not expired`);
    } else if (r.expires_at && r.expires_at.getTime() > seeded) counts.renewed += 1;
    else if (r.status === 'suspended') counts.suspended += 1;
    else if (seeded + graceMs < now) problem(`${r.id} is ${r.status} ${Math.round((now - seeded) / 1000)} s after its expires_at, neither renewed nor suspended`);
    else counts.not_due_yet += 1;
  }
  if (rows.length !== seededExpiry.size) problem(`${seededExpiry.size} expiring resources were seeded, ${rows.length} found`);
  return counts;
}
