/**
 * `npm run bench:flags` (after `npm run build`): the same bench (bench/bench.ts) once per set of
 * node options for the measured server, one after the other, then one table per set: each
 * phase's requests/s, p99 and peak RSS, and the server's peak RSS over the whole run. The memory
 * flags are chosen from it: the most requests/s whose peak RSS under load stays within the
 * budget (BUDGET_MIB, 256).
 *
 *   npm run build
 *   DATABASE_URL=postgresql://postgres@127.0.0.1:5432/cds_dev npm run bench:flags
 *   FLAG_SETS='v8-defaults=;semi8=--max-semi-space-size=8' ROUNDS=2 PHASES=options,volumes npm run bench:flags
 *
 * FLAG_SETS: `name=options;name=options` (each replaces the options of `npm start` entirely:
 * BENCH_SERVER_NODE_ARGS_ONLY; `npm-start` with no `=` means the options of `npm start`).
 * ROUNDS (1): the sets are run in turn ROUNDS times (set A, B, C, A, B, C), so that a machine's
 * drift falls on every set alike. Every other setting (PHASES, DURATION_S, ORGS, ...) goes to
 * each bench run unchanged. FLAGS_OUT writes every run's bench JSON to one file.
 * On a shared machine the requests/s of two runs swing more than most flags move them: read the
 * rounds side by side, and decide on a quiet machine.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, startNodeArgs } from './harness';
import { envInt } from './stats';

const DEFAULT_SETS = [
  'v8-defaults=',
  'npm-start',
  'semi8=--max-semi-space-size=8 --liftoff-only',
  'semi16-grow50=--max-semi-space-size=16 --heap-growing-percent=50 --liftoff-only',
].join(';');

interface FlagSet {
  name: string;
  args: string;
}

function flagSets(spec: string): FlagSet[] {
  return spec
    .split(';')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => {
      if (s === 'npm-start') return { name: 'npm-start', args: startNodeArgs().join(' ') };
      const eq = s.indexOf('=');
      if (eq <= 0) throw new Error(`FLAG_SETS entry "${s}" is not name=options (or npm-start)`);
      return { name: s.slice(0, eq).trim(), args: s.slice(eq + 1).trim() };
    });
}

interface BenchReport {
  server_rss_mib: { peak_under_load: number | null };
  first_start: { peak_rss_mib: number | null };
  phases: { endpoint: string; 'req/s': number; p99_ms: number; rss_peak_mib: number | null; cpu_ms_per_req: number | null; 'ratio+1q': number | null }[];
}

function main(): void {
  const sets = flagSets(process.env.FLAG_SETS ?? DEFAULT_SETS);
  const rounds = envInt('ROUNDS', 1, 10);
  const budget = envInt('BUDGET_MIB', 256, 100_000);
  const tmp = mkdtempSync(join(tmpdir(), 'cds-bench-flags-'));
  const runs: { set: FlagSet; round: number; report: BenchReport }[] = [];
  const log = (s: string): void => void process.stderr.write(`${s}\n`);
  try {
    for (let round = 1; round <= rounds; round++) {
      for (const set of sets) {
        log(`\n== round ${round}/${rounds}, ${set.name}: node ${set.args || '(V8 defaults)'} dist/src/main.js`);
        const out = join(tmp, `${set.name}-${round}.json`);
        const r = spawnSync(process.execPath, ['dist/bench/bench.js'], {
          cwd: ROOT,
          env: { ...process.env, BENCH_SERVER_NODE_ARGS_ONLY: 'true', BENCH_SERVER_NODE_ARGS: set.args, BENCH_OUT: out },
          stdio: ['ignore', 'inherit', 'inherit'],
        });
        if (r.status !== 0) throw new Error(`bench with ${set.name} exited with ${r.status}`);
        runs.push({ set, round, report: JSON.parse(readFileSync(out, 'utf8')) as BenchReport });
      }
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }

  const lines: string[] = [];
  const endpoints = runs[0]?.report.phases.map((p) => p.endpoint) ?? [];
  const header = ['flags', 'round', ...endpoints.flatMap((e) => [`${e} req/s`, 'p99_ms']), 'peak_rss_mib', 'first_start_mib', `within ${budget}`];
  const rows = runs.map(({ set, round, report }) => [
    set.name,
    String(round),
    ...endpoints.flatMap((e) => {
      const p = report.phases.find((x) => x.endpoint === e);
      return [String(p?.['req/s'] ?? '-'), String(p?.p99_ms ?? '-')];
    }),
    String(report.server_rss_mib.peak_under_load ?? '-'),
    String(report.first_start.peak_rss_mib ?? '-'),
    (report.server_rss_mib.peak_under_load ?? Infinity) <= budget ? 'yes' : 'no',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  lines.push(line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line));
  lines.push('', 'flags:', ...sets.map((s) => `  ${s.name}: ${s.args || '(none: V8 defaults)'}`));
  process.stdout.write(`\nCloud Disk Service bench by node options (${process.env.DATABASE_URL ? 'postgresql' : 'embedded'}; RSS budget ${budget} MiB)\n\n${lines.join('\n')}\n`);
  if (process.env.FLAGS_OUT) writeFileSync(process.env.FLAGS_OUT, JSON.stringify(runs.map((r) => ({ flags: r.set, round: r.round, report: r.report })), null, 2) + '\n');
}

try {
  main();
} catch (err: unknown) {
  process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exitCode = 1;
}
