/**
 * The chaos run's traffic on SSH keys and firewall rules: races that the unique indexes and the
 * organization's lock must settle whatever process answers and whatever is killed.
 *
 * - ssh_key_race: three creates of one key at once (the same blob, other names and comments),
 *   then deletes of it: at most one 201; every other answer is 409 conflict on public_key naming
 *   the key that landed (or an earlier copy), never a second key.
 * - firewall_rule_race: three spellings of one canonical rule at once (host bits, IPv6 spelling,
 *   order, "N-N"): at most one 201; every 409 conflict names one id, the winner's when there is one.
 *   Then the rule is deleted (with an Idempotency-Key, retried: 204 twice) so the 100-rule limit
 *   is rarely reached (409 quota_exceeded is an expected answer).
 * - read_firewall: the firewall of the organization's server with a verdict.
 */
import { generateKeyPairSync, randomUUID } from 'node:crypto';

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

/** A fresh ssh-ed25519 public key line, encoded from its JWK as OpenSSH writes it. */
function newKeyLine(): string {
  const x = Buffer.from(generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x as string, 'base64url');
  const field = (b: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, b.length]), b]);
  return `ssh-ed25519 ${Buffer.concat([field(Buffer.from('ssh-ed25519')), field(x)]).toString('base64')}`;
}

const detailsOf = (r: Reply): { code?: string; existing_id?: string; field?: string } => {
  try {
    const e = (JSON.parse(r.body) as { error?: { code: string; details: { existing_id?: string; field?: string } } }).error;
    return e ? { code: e.code, ...e.details } : {};
  } catch {
    return {};
  }
};

export function accessActions<O extends Org>(): { name: string; weight: number; run(ctx: Context<O>): Promise<void> }[] {
  return [
    {
      name: 'ssh_key_race',
      weight: 3,
      async run(ctx) {
        const org = pick(ctx.orgs);
        const line = newKeyLine();
        const tag = randomUUID().slice(0, 8);
        const replies = await Promise.all([0, 1, 2].map((i) => ctx.send(org, 'POST', '/v1/ssh-keys', { body: JSON.stringify({ name: `race-${tag}-${i}`, public_key: `${line} copy${i}` }), key: randomUUID() })));
        for (const r of replies) ctx.stats.count('ssh_key_race', r ? String(r.status) : 'cut_by_kill');
        const answered = replies.filter((r): r is Reply => r !== undefined);
        const created = answered.filter((r) => r.status === 201).map((r) => (JSON.parse(r.body) as { id: string }).id);
        if (created.length > 1) ctx.stats.problem(`one SSH key created twice in ${org.id}: ${created.join(', ')}`);
        for (const r of answered.filter((x) => x.status !== 201)) {
          const d = detailsOf(r);
          const expected = r.status === 409 && ((d.code === 'conflict' && d.field === 'public_key' && (created.length === 0 || d.existing_id === created[0])) || d.code === 'quota_exceeded');
          if (!expected) ctx.stats.problem(`ssh_key_race in ${org.id} answered ${r.status} ${r.body.slice(0, 160)}`);
        }
        // Delete whichever copy landed (the winner may be unknown when its answer was cut).
        const listed = await ctx.send(org, 'GET', `/v1/ssh-keys?name=race-${tag}-0`);
        const ids = new Set(created);
        for (const i of [1, 2]) {
          const more = await ctx.send(org, 'GET', `/v1/ssh-keys?name=race-${tag}-${i}`);
          if (more?.status === 200) for (const k of (JSON.parse(more.body) as { ssh_keys: { id: string }[] }).ssh_keys) ids.add(k.id);
        }
        if (listed?.status === 200) for (const k of (JSON.parse(listed.body) as { ssh_keys: { id: string }[] }).ssh_keys) ids.add(k.id);
        if (ids.size > 1) ctx.stats.problem(`one SSH key stored ${ids.size} times in ${org.id}: ${[...ids].join(', ')}`);
        for (const id of ids) {
          const reply = await ctx.send(org, 'DELETE', `/v1/ssh-keys/${id}`, { key: randomUUID() });
          ctx.stats.count('ssh_key_delete', reply ? String(reply.status) : 'cut_by_kill');
          if (reply && reply.status !== 204 && reply.status !== 404) ctx.stats.problem(`DELETE /v1/ssh-keys/${id} answered ${reply.status} ${reply.body.slice(0, 120)}`);
        }
      },
    },
    {
      name: 'firewall_rule_race',
      weight: 3,
      async run(ctx) {
        const org = pick(ctx.orgs);
        const a = Math.floor(Math.random() * 250) + 1;
        const b = Math.floor(Math.random() * 250) + 1;
        const port = 1024 + Math.floor(Math.random() * 60000);
        const onServer = Math.random() < 0.5 ? { server_id: org.server } : {};
        const spellings = [
          { port: String(port), sources: [`10.${a}.${b}.0/24`, `2001:db8:${a.toString(16)}::/48`] },
          { port: `${port}-${port}`, sources: [`2001:DB8:${a.toString(16).toUpperCase()}:0::1/48`, `10.${a}.${b}.77/24`] },
          { port: String(port), sources: [`10.${a}.${b}.9/24`, `2001:0db8:${a.toString(16).padStart(4, '0')}::/48`, `10.${a}.${b}.0/24`] },
        ];
        const replies = await Promise.all(
          spellings.map((s) => ctx.send(org, 'POST', '/v1/firewall-rules', { body: JSON.stringify({ direction: 'in', protocol: 'tcp', ...s, ...onServer }), key: randomUUID() })),
        );
        for (const r of replies) ctx.stats.count('firewall_rule_race', r ? String(r.status) : 'cut_by_kill');
        const answered = replies.filter((r): r is Reply => r !== undefined);
        const created = answered.filter((r) => r.status === 201).map((r) => (JSON.parse(r.body) as { id: string }).id);
        if (created.length > 1) ctx.stats.problem(`one canonical firewall rule created twice in ${org.id}: ${created.join(', ')}`);
        const named = new Set<string>();
        for (const r of answered.filter((x) => x.status !== 201)) {
          const d = detailsOf(r);
          if (r.status === 409 && d.code === 'conflict' && d.existing_id) named.add(d.existing_id);
          else if (!(r.status === 409 && d.code === 'quota_exceeded')) ctx.stats.problem(`firewall_rule_race in ${org.id} answered ${r.status} ${r.body.slice(0, 160)}`);
        }
        if (named.size > 1 || (created.length === 1 && named.size === 1 && !named.has(created[0]))) {
          ctx.stats.problem(`firewall_rule_race in ${org.id}: conflicts name ${[...named].join(', ')}, created ${created.join(', ')}`);
        }
        const id = created[0] ?? [...named][0];
        if (!id) return;
        const key = randomUUID();
        for (let i = 0; i < 2; i++) {
          const reply = await ctx.send(org, 'DELETE', `/v1/firewall-rules/${id}`, { key });
          ctx.stats.count('firewall_rule_delete_retry', reply ? String(reply.status) : 'cut_by_kill');
          if (reply && reply.status !== 204 && reply.status !== 404) ctx.stats.problem(`DELETE /v1/firewall-rules/${id} answered ${reply.status} ${reply.body.slice(0, 120)}`);
        }
      },
    },
    {
      name: 'read_firewall',
      weight: 3,
      async run(ctx) {
        const org = pick(ctx.orgs);
        const reply = await ctx.send(org, 'GET', `/v1/servers/${org.server}/firewall?direction=in&protocol=tcp&address=10.${Math.floor(Math.random() * 250)}.1.1&port=${1024 + Math.floor(Math.random() * 60000)}`);
        ctx.stats.count('read_firewall', reply ? String(reply.status) : 'cut_by_kill');
        if (reply && reply.status !== 200) ctx.stats.problem(`GET /v1/servers/${org.server}/firewall answered ${reply.status} ${reply.body.slice(0, 120)}`);
      },
    },
  ];
}
