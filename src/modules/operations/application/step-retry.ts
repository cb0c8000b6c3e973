/** The longest wait between two attempts of a step whose external service was unavailable. */
export const STEP_RETRY_CAP_MS = 60_000;

/**
 * The wait before the next attempt of a step after its `failures`-th failed call (1, 2, 3 …):
 * base, 2 × base, 4 × base … capped at 60 s (lifecycle.md: 1 s, 2 s, 4 s … 60 s).
 */
export function stepRetryDelayMs(failures: number, baseMs = 1_000): number {
  const exponent = Math.max(0, Math.min(failures - 1, 30));
  return Math.min(baseMs * 2 ** exponent, STEP_RETRY_CAP_MS);
}

/** Whether a step failing since `since` has used up its retry window at `now`. */
export function retryWindowClosed(since: Date, now: Date, windowMs: number): boolean {
  return now.getTime() - since.getTime() >= windowMs;
}
