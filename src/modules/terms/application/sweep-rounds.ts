/** One transition of a term sweep: one batch, in a transaction of its own; how many rows it handled. */
export type SweepStep = () => Promise<number>;

/** Steps with the batch size they take: a batch that comes back that full means more may be due. */
export interface SizedSteps {
  batch: number;
  steps: readonly SweepStep[];
}

/** How long a transition that had nothing more due waits before a later round asks it again. */
export const SWEEP_REPOLL_MS = 1000;

/**
 * Runs a sweep's transitions in rounds: each round gives every transition one batch (of its
 * group's size), in order, and the rounds go on while any of them came back full (a full batch:
 * more may be due). So no transition waits behind another's backlog: 100,000 disks due at once do
 * not keep the servers due beside them from their suspension, nor a backlog of automatic renewals
 * the suspensions (terms.md: every deadline within 120 s, whatever is due beside it). A
 * transition that came back short is asked again, while others are still busy, once
 * SWEEP_REPOLL_MS has passed (what comes due meanwhile), not every round: its claim may scan
 * many rows to find none (a notice offset over every resource expiring within it). After a round
 * that left work due, the sweep rests `restPct` percent of that round's time (TERM_SWEEP_PAUSE_PCT
 * in the worker's sweep; `rest` waits that long): a backlog then shares the cores with the API's
 * requests and the worker instead of taking them whole. How many rows the steps handled in all.
 */
export async function inRounds(
  groups: readonly SizedSteps[],
  stopping: () => boolean,
  now: () => number = Date.now,
  restPct = 0,
  rest: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
): Promise<number> {
  const steps = groups.flatMap(({ batch, steps }) => steps.map((run) => ({ batch, run, idleSince: -Infinity })));
  let done = 0;
  for (let more = true; more && !stopping(); ) {
    const roundStart = now();
    more = false;
    for (const step of steps) {
      if (stopping()) break;
      if (now() - step.idleSince < SWEEP_REPOLL_MS) continue;
      const n = await step.run();
      done += n;
      if (n >= step.batch) more = true;
      else step.idleSince = now();
    }
    if (more && restPct > 0 && !stopping()) await rest(((now() - roundStart) * restPct) / 100);
  }
  return done;
}
