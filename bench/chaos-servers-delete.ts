/**
 * The chaos run's traffic on DELETE /v1/servers/{id}: deletions of servers with disks while the
 * storage and compute providers fail at random (PROVIDER_FAULTS) and processes are killed.
 *
 * The run seeds each organization with DOOMED_PER_ORG servers of their own for this (never the
 * `web-1` server the rest of the traffic attaches disks to), each with one attached disk kept out
 * of the organization's volume list (so renewals and the volume actions keep their seeded disks).
 *
 * - server_delete: DELETE of a doomed server, with an Idempotency-Key, repeated with the same key
 *   one time in three: 202 (its operation joins those that must end), 409 invalid_state (deleting,
 *   deleted, or an operation in the way, then naming it in details.operation_id), 503
 *   provider_unavailable (a circuit open: nothing recorded); a replay of a 202, 404 or 409 must
 *   answer the same bytes.
 * - server_delete_detach_race: DELETE of a doomed server and, at once, detach of its disk: at
 *   most one of the two is accepted unless the detach was refused first; a refused detach of a
 *   deleting server's disk names the vm.delete.
 *
 * - server_delete_attach_race: DELETE of a doomed server and, at once, its attach to the
 *   organization's private network (made on first use): the attach is 202 (its operation must
 *   end), 409 (invalid_state: deleting, deleted, attached already, an operation in the way;
 *   quota_exceeded; conflict) or 503; a deleted server holds no attachment (verify's
 *   provider.addresses_match_servers and networks.attachments_valid).
 *
 * After the run, `verify` checks servers.no_disk_on_deleted_server,
 * servers.deleted_by_succeeded_delete and servers.deleting_has_operation with the rest.
 */
import { randomUUID } from 'node:crypto';

/** Servers per organization the run may delete. */
export const DOOMED_PER_ORG = 6;

interface Org {
  id: string;
  doomed: string[];
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

const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)];

/** The doomed servers and their disks of organization number `n` (1-based), for the seed file. */
export function doomedSeed(n: number): { servers: object[]; volumes: object[] } {
  const ids = Array.from({ length: DOOMED_PER_ORG }, (_, k) => k + 1);
  return {
    servers: ids.map((k) => ({ id: `vm_chaos${n}x${k}`, name: `doomed-${k}`, region: 'id-jkt', zone: 'id-jkt-a' })),
    volumes: ids.map((k) => ({
      id: `vol_chaos${n}x${k}`, name: `doomed-${k}`, type: 'premium', region: 'id-jkt', zone: 'id-jkt-a', size_gb: 10, term_months: 1,
      currency: 'USD', server: `vm_chaos${n}x${k}`, mount_path: '/mnt/doomed',
    })),
  };
}

/** Whether a seeded id is one of the doomed servers' (kept out of the volume actions' lists). */
export const isDoomed = (id: string): boolean => /^(vm|vol)_chaos\d+x\d+$/.test(id);

const errorOf = (r: Reply): { code?: string; operation_id?: string } => {
  try {
    const e = (JSON.parse(r.body) as { error?: { code: string; details?: { operation_id?: string } } }).error;
    return e ? { code: e.code, operation_id: e.details?.operation_id } : {};
  } catch {
    return {};
  }
};

/** Checks one answer of DELETE /v1/servers/{id}; a 202's operation must end. */
function noteDelete<O extends Org>(ctx: Context<O>, action: string, org: O, server: string, r: Reply | undefined): void {
  ctx.stats.count(action, r ? String(r.status) : 'cut_by_kill');
  if (!r) return;
  if (r.status === 202) {
    const body = JSON.parse(r.body) as { server?: { id: string; status: string }; operation?: { id: string; type: string } };
    if (body.operation?.id) ctx.stats.accepted.add(body.operation.id);
    if (body.server?.id !== server || body.server.status !== 'deleting' || body.operation?.type !== 'vm.delete') {
      ctx.stats.problem(`DELETE /v1/servers/${server} in ${org.id} answered 202 ${r.body.slice(0, 200)}`);
    }
    return;
  }
  const e = errorOf(r);
  const expected = (r.status === 409 && e.code === 'invalid_state') || (r.status === 503 && e.code === 'provider_unavailable');
  if (!expected) ctx.stats.problem(`DELETE /v1/servers/${server} in ${org.id} answered ${r.status} ${r.body.slice(0, 200)}`);
}

/** Each organization's private network for the attach race, by organization id (made on first use). */
const networks = new Map<string, string>();

async function networkOf<O extends Org>(ctx: Context<O>, org: O): Promise<string | undefined> {
  const known = networks.get(org.id);
  if (known) return known;
  const made = await ctx.send(org, 'POST', '/v1/networks', { body: JSON.stringify({ name: 'chaos', region: 'id-jkt', ip_range: '10.77.0.0/16' }), key: randomUUID() });
  if (made?.status === 201) {
    networks.set(org.id, (JSON.parse(made.body) as { id: string }).id);
  } else {
    // Made by an earlier request whose answer a kill cut off: found by its region.
    const list = await ctx.send(org, 'GET', '/v1/networks?region=id-jkt');
    const found = list?.status === 200 ? (JSON.parse(list.body) as { networks: { id: string; name: string }[] }).networks.find((n) => n.name === 'chaos') : undefined;
    if (found) networks.set(org.id, found.id);
  }
  return networks.get(org.id);
}

export function serverDeleteActions<O extends Org>(): { name: string; weight: number; run(ctx: Context<O>): Promise<void> }[] {
  return [
    {
      name: 'server_delete',
      weight: 2,
      async run(ctx) {
        const org = pick(ctx.orgs);
        if (org.doomed.length === 0) return;
        const server = pick(org.doomed);
        const key = randomUUID();
        const first = await ctx.send(org, 'DELETE', `/v1/servers/${server}`, { key });
        noteDelete(ctx, 'server_delete', org, server, first);
        if (first && Math.random() < 0.33) {
          const again = await ctx.send(org, 'DELETE', `/v1/servers/${server}`, { key });
          ctx.stats.count('server_delete_repeat_key', again ? String(again.status) : 'cut_by_kill');
          if (again && [202, 404, 409].includes(first.status) && (again.status !== first.status || again.body !== first.body)) {
            ctx.stats.problem(`DELETE /v1/servers/${server} replay of key ${key} answered ${again.status} ${again.body.slice(0, 120)}; the original was ${first.status} ${first.body.slice(0, 120)}`);
          }
        }
        // Once its deletion is known to have ended, the server leaves the pool.
        const read = await ctx.send(org, 'GET', `/v1/servers/${server}`);
        if (read?.status === 200 && (JSON.parse(read.body) as { status: string }).status === 'deleted') org.doomed = org.doomed.filter((s) => s !== server);
      },
    },
    {
      name: 'server_delete_detach_race',
      weight: 1,
      async run(ctx) {
        const org = pick(ctx.orgs);
        if (org.doomed.length === 0) return;
        const server = pick(org.doomed);
        const volume = server.replace(/^vm_/, 'vol_');
        const [del, detach] = await Promise.all([
          ctx.send(org, 'DELETE', `/v1/servers/${server}`, { key: randomUUID() }),
          ctx.send(org, 'POST', `/v1/volumes/${volume}/detach`, { key: randomUUID() }),
        ]);
        noteDelete(ctx, 'server_delete_detach_race', org, server, del);
        ctx.stats.count('server_delete_race_detach', detach ? String(detach.status) : 'cut_by_kill');
        if (!detach) return;
        if (detach.status === 202) {
          const opId = (JSON.parse(detach.body) as { operation?: { id: string } }).operation?.id;
          if (opId) ctx.stats.accepted.add(opId);
          // Both accepted: only when the detach had ended before the deletion was accepted (which then found no disk to detach).
          if (del?.status === 202) {
            const delOp = (JSON.parse(del.body) as { operation: { id: string; steps: { name: string }[] } }).operation;
            if (delOp.steps.some((s) => s.name === 'detaching_volumes')) {
              ctx.stats.problem(`both the detach (${opId}) and the deletion (${delOp.id}) of ${server}'s disk in ${org.id} were accepted`);
            }
          }
          return;
        }
        const e = errorOf(detach);
        const expected = (detach.status === 409 && e.code === 'invalid_state') || (detach.status === 503 && e.code === 'provider_unavailable');
        if (!expected) ctx.stats.problem(`detach of ${volume} racing the deletion of ${server} answered ${detach.status} ${detach.body.slice(0, 200)}`);
        if (del?.status === 202 && detach.status === 409 && e.code === 'invalid_state') {
          const delOp = (JSON.parse(del.body) as { operation: { id: string } }).operation.id;
          // Refused because the server is deleting: it names the vm.delete (unless the deletion had already ended, or the disk was detached).
          if (e.operation_id !== undefined && e.operation_id !== delOp) {
            ctx.stats.problem(`detach of ${volume} refused naming ${e.operation_id}, not the deletion ${delOp}`);
          }
        }
      },
    },
    {
      name: 'server_delete_attach_race',
      weight: 1,
      async run(ctx) {
        const org = pick(ctx.orgs);
        if (org.doomed.length === 0) return;
        const network = await networkOf(ctx, org);
        if (!network) return;
        const server = pick(org.doomed);
        const [del, attach] = await Promise.all([
          ctx.send(org, 'DELETE', `/v1/servers/${server}`, { key: randomUUID() }),
          ctx.send(org, 'POST', `/v1/servers/${server}/networks`, { body: JSON.stringify({ network_id: network }), key: randomUUID() }),
        ]);
        noteDelete(ctx, 'server_delete_attach_race', org, server, del);
        ctx.stats.count('server_delete_race_attach', attach ? String(attach.status) : 'cut_by_kill');
        if (!attach) return;
        if (attach.status === 202) {
          const body = JSON.parse(attach.body) as { operation?: { id: string; type: string } };
          if (body.operation?.id) ctx.stats.accepted.add(body.operation.id);
          if (body.operation?.type !== 'vm.attach_network') ctx.stats.problem(`attach of ${server} answered 202 ${attach.body.slice(0, 200)}`);
          return;
        }
        const e = errorOf(attach);
        const expected = (attach.status === 409 && ['invalid_state', 'quota_exceeded', 'conflict'].includes(e.code ?? '')) || (attach.status === 503 && e.code === 'provider_unavailable');
        if (!expected) ctx.stats.problem(`attach of ${server} racing its deletion answered ${attach.status} ${attach.body.slice(0, 200)}`);
      },
    },
  ];
}
