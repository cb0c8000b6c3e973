/**
 * Deadlines that stretch with the machine's load. A test waits on a condition (a process that
 * prints its address, operations that end) until a deadline; on a 2-core machine shared with other
 * work every wait takes longer, and a deadline measured on a quiet machine fails a correct test.
 * `scaled(ms)` multiplies a quiet-machine deadline by the load per core of the last minute, between
 * 1 and 4 (`TEST_DEADLINE_FACTOR` fixes it instead). Only deadlines stretch: a test that passes
 * waits exactly as long as its condition takes.
 */
import { availableParallelism, loadavg } from 'node:os';

export function deadlineFactor(): number {
  const fixed = Number(process.env.TEST_DEADLINE_FACTOR);
  if (Number.isFinite(fixed) && fixed > 0) return fixed;
  const perCore = loadavg()[0] / Math.max(1, availableParallelism());
  return Math.min(4, Math.max(1, perCore));
}

/** A quiet machine's deadline `ms`, stretched by the load now. */
export function scaled(ms: number): number {
  return Math.round(ms * deadlineFactor());
}
