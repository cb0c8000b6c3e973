/**
 * `node dist/bench/profile-summary.js FILE.cpuprofile [TOP] [SKIP_S]`: where a profiled server's main
 * thread spent its busy time (a profile from `BENCH_SERVER_NODE_ARGS="--cpu-prof
 * --cpu-prof-dir=/tmp/prof" PHASES=options npm run bench`). Prints the busy share of the
 * profile (samples that are not idle), then shares of the busy time by area (garbage
 * collection, the application's code, each package under node_modules, Node's internals) and
 * the TOP (25) functions by self time, with their share of the busy time. Shares, not
 * milliseconds: on a shared machine they move far less than times. SKIP_S (default 0) leaves
 * out the first seconds of the profile (the server's start: module loading, Nest's scan).
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The area a function belongs to: its package under node_modules, the application, Node, or V8's own entries. */
export function areaOf(url: string, fn: string): string {
  if (fn === '(garbage collector)') return 'garbage collection';
  if (fn === '(program)') return '(program: V8 and native work outside JavaScript)';
  if (!url) return fn.startsWith('(') ? fn : 'native';
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1];
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  if (/\/dist\/src\//.test(url)) return `app ${url.replace(/^.*\/dist\/src\//, '').split('/').slice(0, 2).join('/')}`;
  return url;
}

function main(): void {
  const [file, topArg, skipArg] = process.argv.slice(2);
  if (!file) throw new Error('usage: node dist/bench/profile-summary.js FILE.cpuprofile [TOP] [SKIP_S]');
  const top = Number(topArg ?? 25);
  const skipUs = Number(skipArg ?? 0) * 1e6;
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  let total = 0;
  let at = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    at += dt;
    if (at < skipUs) return;
    selfUs.set(id, (selfUs.get(id) ?? 0) + dt);
    total += dt;
  });
  let idle = 0;
  const areas = new Map<string, number>();
  const functions = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const { callFrame } = byId.get(id)!;
    if (callFrame.functionName === '(idle)') {
      idle += us;
      continue;
    }
    const area = areaOf(callFrame.url, callFrame.functionName);
    areas.set(area, (areas.get(area) ?? 0) + us);
    const where = callFrame.url ? `${callFrame.url.replace(/^.*\/(node_modules|dist)\//, '$1/')}:${callFrame.lineNumber + 1}` : '';
    const key = `${callFrame.functionName || '(anonymous)'} ${where}`.trim();
    functions.set(key, (functions.get(key) ?? 0) + us);
  }
  const busy = total - idle;
  const pct = (us: number): string => `${((us / busy) * 100).toFixed(1).padStart(5)}%`;
  const out: string[] = [];
  out.push(`${file}: ${(total / 1e6).toFixed(1)} s profiled, busy ${(busy / 1e6).toFixed(1)} s (${((busy / total) * 100).toFixed(0)}%)`, '', 'busy time by area:');
  for (const [area, us] of [...areas].sort((a, b) => b[1] - a[1]).slice(0, 30)) out.push(`  ${pct(us)}  ${area}`);
  out.push('', `top ${top} functions by self time (share of busy time):`);
  for (const [fn, us] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, top)) out.push(`  ${pct(us)}  ${fn}`);
  process.stdout.write(`${out.join('\n')}\n`);
}

if (require.main === module) main();
