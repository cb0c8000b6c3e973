
/** Small helpers shared by the benchmark scripts: bounded settings from the environment, percentiles, a free port. */

/** A whole-number setting from the environment, refused outside [min, max]. */
export function envInt(name: string, fallback: number, max: number, min = 1): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) throw new Error(`${name} must be a whole number from ${min} to ${max}`);
  return Number(raw);
}

/** The p-th percentile (nearest rank) of ascending values; 0 for none. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, index)];
}

/** Milliseconds rounded to the microsecond, for printing. */
export const round3 = (ms: number): number => Math.round(ms * 1000) / 1000;

