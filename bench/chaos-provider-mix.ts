/**
 * The chaos run's provider mix (CHAOS_PROVIDER_MIX=1): provider calls that take effect and lose
 * their answer, a retry window shorter than the outages, SIGKILLs, and processes restarted with
 * PROVIDER_DOWN (for them the provider is unreachable until they are killed again). Operations
 * then fail after calls that may have taken effect; the worker reads the provider's truth before
 * giving anything back, and the reconciliation sweep settles what it could not read. After the
 * traffic, settle() replaces the processes that still see the provider down and waits for the
 * sweeps, so that `verify` must end clean.
 *
 * Settings (environment): CHAOS_PROVIDER_MIX=1 (off by default), MIX_PROVIDER_FAULTS (0.3),
 * MIX_RETRY_WINDOW_MS (1500), MIX_DOWN_RESTARTS (share of restarts with PROVIDER_DOWN, 0.5),
 * MIX_SETTLE_S (longest wait for the sweeps after the traffic, 60).
 */
import type { ChildProcess } from 'node:child_process';
import type { Client } from 'pg';

const enabled = process.env.CHAOS_PROVIDER_MIX === '1';
const SWEEP_MS = 1000;

interface MixServer {
  child: ChildProcess;
  killed: boolean;
}

/** Processes started with PROVIDER_DOWN, by their child process. */
const downProcesses = new WeakSet<ChildProcess>();
let downRestarts = 0;

export const providerMix = {
  enabled,

  /** A 503 provider_unavailable is the documented answer of a process that sees the provider down: expected in the mix. */
  expected(status: number, body: string): boolean {
    return enabled && status === 503 && body.includes('"provider_unavailable"');
  },

  /** What every server process of the run gets on top of the usual settings. */
  env(): Record<string, string> {
    if (!enabled) return {};
    return {
      PROVIDER_FAULTS: process.env.MIX_PROVIDER_FAULTS ?? '0.3',
      PROVIDER_RETRY_WINDOW_MS: process.env.MIX_RETRY_WINDOW_MS ?? '1500',
      RECONCILE_SWEEP_INTERVAL_MS: String(SWEEP_MS),
      ORPHAN_DISK_SWEEP_INTERVAL_MS: String(SWEEP_MS),
    };
  },

  /** The environment of a restarted process: some of them see the provider down. */
  restartEnv(base: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
    if (!enabled || Math.random() >= Number(process.env.MIX_DOWN_RESTARTS ?? '0.5')) return base;
    downRestarts += 1;
    return { ...base, PROVIDER_DOWN: 'true' };
  },

  /** Remembers which started process sees the provider down (call with restartEnv's answer). */
  started<S extends MixServer>(server: S, env: NodeJS.ProcessEnv): S {
    if (env.PROVIDER_DOWN === 'true') downProcesses.add(server.child);
    return server;
  },

  /**
   * After the traffic: the processes that see the provider down are replaced by ones that see it
   * up, then waits until no live volume differs from its disk in a way the sweeps repair (a
   * `deleting` volume with no operation, an attachment the provider does not hold), at most
   * MIX_SETTLE_S seconds.
   */
  async settle<S extends MixServer>(own: Client, servers: S[], start: (env: NodeJS.ProcessEnv) => Promise<S>, env: NodeJS.ProcessEnv): Promise<Record<string, unknown>> {
    if (!enabled) return {};
    let replaced = 0;
    for (const s of servers.filter((x) => !x.killed && downProcesses.has(x.child))) {
      s.killed = true;
      s.child.kill('SIGKILL');
      servers.push(await start(env));
      replaced += 1;
    }
    const started = Date.now();
    const limitMs = Number(process.env.MIX_SETTLE_S ?? '60') * 1000;
    let left = -1;
    while (Date.now() - started < limitMs) {
      left = Number(
        (
          await own.query(
            `SELECT count(*)::int AS n FROM volumes v
               LEFT JOIN provider_disks d ON d.volume_id = v.id AND d.deleted_at IS NULL
              WHERE v.deleted_at IS NULL AND v.status <> 'creating'
                AND NOT EXISTS (SELECT 1 FROM operations o WHERE o.volume_id = v.id AND o.status IN ('pending', 'running'))
                AND (v.status = 'deleting' OR d.volume_id IS NULL OR d.server_id IS DISTINCT FROM v.server_id)`,
          )
        ).rows[0].n,
      );
      const orphans = Number(
        (
          await own.query(
            `SELECT count(*)::int AS n FROM provider_disks d LEFT JOIN volumes v ON v.id = d.volume_id
              WHERE d.deleted_at IS NULL AND (v.id IS NULL OR v.deleted_at IS NOT NULL)
                AND NOT EXISTS (SELECT 1 FROM operations o WHERE o.volume_id = d.volume_id AND o.status IN ('pending', 'running'))`,
          )
        ).rows[0].n,
      );
      if (left === 0 && orphans === 0) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    // One more sweep interval: a repair under way when the count reached 0 is committed.
    await new Promise((r) => setTimeout(r, 2 * SWEEP_MS));
    return { provider_mix: { down_restarts: downRestarts, down_processes_replaced: replaced, settle_ms: Date.now() - started, unsettled_volumes: left } };
  },
};
