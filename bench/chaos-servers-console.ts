/**
 * The chaos run's traffic on server consoles (POST /v1/servers/{id}/console), whatever process
 * answers and whatever is killed:
 *
 * - server_console: a credential made with an Idempotency-Key, then the same request again (the
 *   very same credential, replayed), then one without a key (a new credential). Every 201 has the
 *   documented shape (vnc, a wss:// URL with a one-time token, a 24-character base62 password,
 *   expires_at about 60 s ahead); a 409 invalid_state (the server not running: other traffic may
 *   stop it) and a 503 provider_unavailable (the compute provider down in a provider mix) are
 *   expected answers; anything else is a problem. `verify` at the end checks the provider's
 *   instances against the servers (provider.instances_match_servers).
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

/** What these actions need of chaos.ts's context (a structural subset of it). */
interface Context<O extends Org> {
  orgs: O[];
  stats: { count(action: string, outcome: string): void; problem(text: string): void };
  send(org: O, method: string, path: string, opts?: { body?: string; key?: string; session?: boolean }): Promise<Reply | undefined>;
}

const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)];
const URL_PATTERN = /^wss:\/\/[^/\s]+\/\S+\?token=[A-Za-z0-9]{16,}$/;
/** A process's clock and this one's may differ a little; a request may wait in a queue. */
const EXPIRY_SLACK_MS = 15_000;

interface Credential {
  type: string;
  url: string;
  password: string;
  expires_at: string;
}

/** What is wrong with a 201's body (undefined: nothing). */
function wrongCredential(body: string, sentAt: number): string | undefined {
  let c: Credential;
  try {
    c = JSON.parse(body) as Credential;
  } catch {
    return 'not JSON';
  }
  if (Object.keys(c).sort().join(',') !== 'expires_at,password,type,url') return `members ${Object.keys(c).join(',')}`;
  if (c.type !== 'vnc') return `type ${c.type}`;
  if (!URL_PATTERN.test(c.url)) return 'url is no wss:// URL with a token';
  if (!/^[A-Za-z0-9]{24}$/.test(c.password)) return 'password is not 24 base62 characters';
  const ahead = Date.parse(c.expires_at) - sentAt;
  if (!(ahead > 60_000 - EXPIRY_SLACK_MS && ahead <= 60_000 + EXPIRY_SLACK_MS)) return `expires_at ${c.expires_at} is not about 60 s after the request`;
  return undefined;
}

const expectedRefusal = (r: Reply): boolean =>
  (r.status === 409 && r.body.includes('"invalid_state"')) || (r.status === 503 && r.body.includes('"provider_unavailable"'));

export function consoleActions<O extends Org>(): { name: string; weight: number; run(ctx: Context<O>): Promise<void> }[] {
  return [
    {
      name: 'server_console',
      weight: 2,
      async run(ctx) {
        const org = pick(ctx.orgs);
        const path = `/v1/servers/${org.server}/console`;
        const key = randomUUID();
        const check = (label: string, r: Reply | undefined, sentAt: number): Reply | undefined => {
          ctx.stats.count('server_console', r ? String(r.status) : 'cut_by_kill');
          if (!r) return undefined;
          if (r.status === 201) {
            const wrong = wrongCredential(r.body, sentAt);
            if (wrong) ctx.stats.problem(`server_console ${label} in ${org.id}: ${wrong}`);
          } else if (!expectedRefusal(r)) {
            ctx.stats.problem(`server_console ${label} in ${org.id} answered ${r.status} ${r.body.slice(0, 160)}`);
          }
          return r;
        };
        const sentAt = Date.now();
        const first = check('with a key', await ctx.send(org, 'POST', path, { key }), sentAt);
        const again = check('replayed', await ctx.send(org, 'POST', path, { key }), sentAt);
        // A stored answer (201, 409) replays byte for byte; a 503 was not stored, so the retry may differ.
        if (first && again && (first.status === 201 || first.status === 409) && again.body !== first.body) {
          ctx.stats.problem(`server_console replay in ${org.id} differs: ${first.status} then ${again.status}`);
        }
        const fresh = check('without a key', await ctx.send(org, 'POST', path), Date.now());
        if (first?.status === 201 && fresh?.status === 201) {
          const a = JSON.parse(first.body) as Credential;
          const b = JSON.parse(fresh.body) as Credential;
          if (a.password === b.password || a.url === b.url) ctx.stats.problem(`server_console in ${org.id}: a new call answered an earlier credential`);
        }
      },
    },
  ];
}
