/**
 * What a test file starts outside itself (server processes, CLI runs, temporary folders) is
 * recorded while it lives, so that nothing outlives the run when a test fails before its own
 * cleanup: each worker kills its recorded process groups when it exits, and Jest's global
 * teardown (jest-global-teardown.ts) kills any group still recorded and removes the recorded
 * folders, printing what it had to clean. Records are files in the run's cache directory
 * (CDS_TEST_RUN_CACHE), one per process group or folder; without the variable nothing is recorded.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const recordDir = (kind: 'pids' | 'dirs'): string | undefined => {
  const cache = process.env.CDS_TEST_RUN_CACHE;
  if (!cache || !existsSync(cache)) return undefined;
  const dir = join(cache, kind);
  mkdirSync(dir, { recursive: true });
  return dir;
};

const live = new Set<number>();
let hooked = false;

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      /* gone already */
    }
  }
}

/** Records a child started with `detached: true` (the leader of its own process group) until it exits. */
export function trackProcess(child: ChildProcess): void {
  const pid = child.pid;
  if (!pid) return;
  live.add(pid);
  const dir = recordDir('pids');
  const file = dir && join(dir, String(pid));
  if (file) writeFileSync(file, String(pid));
  child.once('exit', () => {
    live.delete(pid);
    // The leader has exited; its group may not have (a shell's children): end them too.
    killGroup(pid, 'SIGKILL');
    if (file) rmSync(file, { force: true });
  });
  if (!hooked) {
    hooked = true;
    process.once('exit', () => {
      for (const p of live) killGroup(p, 'SIGKILL');
    });
  }
}

/** Records a temporary folder until `untrackDir` (its owner removed it). */
export function trackDir(path: string): void {
  const dir = recordDir('dirs');
  if (dir) writeFileSync(join(dir, Buffer.from(path).toString('hex')), path);
}

export function untrackDir(path: string): void {
  const dir = recordDir('dirs');
  if (dir) rmSync(join(dir, Buffer.from(path).toString('hex')), { force: true });
}

/** Global teardown: kills recorded process groups still alive and removes recorded folders. */
export function cleanLeftovers(): { processes: number; folders: number } {
  let processes = 0;
  let folders = 0;
  const pids = recordDir('pids');
  if (pids) {
    for (const f of readdirSync(pids)) {
      const pid = Number(readFileSync(join(pids, f), 'utf8'));
      let alive = false;
      try {
        process.kill(pid, 0);
        alive = true;
      } catch {
        /* gone */
      }
      if (alive) processes += 1;
      killGroup(pid, 'SIGKILL');
    }
  }
  const dirs = recordDir('dirs');
  if (dirs) {
    for (const f of readdirSync(dirs)) {
      const path = readFileSync(join(dirs, f), 'utf8');
      if (existsSync(path)) {
        rmSync(path, { recursive: true, force: true });
        folders += 1;
      }
    }
  }
  return { processes, folders };
}
