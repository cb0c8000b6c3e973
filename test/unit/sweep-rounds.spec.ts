import { SWEEP_REPOLL_MS, inRounds } from '../../src/modules/terms/application/sweep-rounds';

/** A transition with `due` rows that takes up to `batch` a call, each call logged. */
function transition(name: string, log: string[], due: () => number, take: (n: number) => void) {
  return async () => {
    const n = due();
    take(n);
    log.push(`${name}:${n}`);
    return n;
  };
}

describe('inRounds (the term sweep\'s rounds)', () => {
  it('gives every transition one batch a round, in order, while any comes back full; each group with its own batch size', async () => {
    const log: string[] = [];
    let disks = 25;
    let servers = 12;
    let renewals = 5;
    const done = await inRounds(
      [
        { batch: 10, steps: [transition('disks', log, () => Math.min(10, disks), (n) => (disks -= n)), transition('servers', log, () => Math.min(10, servers), (n) => (servers -= n))] },
        { batch: 2, steps: [transition('renewals', log, () => Math.min(2, renewals), (n) => (renewals -= n))] },
      ],
      () => false,
      () => 0, // time stands still: a transition that came back short is not asked again
    );
    expect(done).toBe(25 + 12 + 5);
    // servers came back short in round 2 (2 < 10); renewals are a group of batch 2, full until round 3 (1 < 2).
    expect(log).toEqual(['disks:10', 'servers:10', 'renewals:2', 'disks:10', 'servers:2', 'renewals:2', 'disks:5', 'renewals:1']);
  });

  it('asks a transition that had nothing again once SWEEP_REPOLL_MS has passed while others are busy (what came due meanwhile)', async () => {
    const log: string[] = [];
    let t = 0;
    let disks = 40;
    let servers = 0;
    const done = await inRounds(
      [
        {
          batch: 10,
          steps: [
            transition('disks', log, () => Math.min(10, disks), (n) => {
              disks -= n;
              t += SWEEP_REPOLL_MS / 2;
              if (disks === 20) servers = 3; // servers come due while the disks' backlog runs
            }),
            transition('servers', log, () => servers, (n) => (servers -= n)),
          ],
        },
      ],
      () => false,
      () => t,
    );
    expect(done).toBe(43);
    expect(log).toEqual(['disks:10', 'servers:0', 'disks:10', 'disks:10', 'servers:3', 'disks:10', 'disks:0', 'servers:0']);
  });

  it('rests restPct of a round\'s time after each round that left work due, not after the last one', async () => {
    const log: string[] = [];
    let t = 0;
    let disks = 25;
    const rests: number[] = [];
    const done = await inRounds(
      [{ batch: 10, steps: [transition('disks', log, () => Math.min(10, disks), (n) => { disks -= n; t += 200; })] }],
      () => false,
      () => t,
      50,
      async (ms) => {
        rests.push(ms);
        t += ms;
      },
    );
    expect(done).toBe(25);
    expect(log).toEqual(['disks:10', 'disks:10', 'disks:5']);
    // Two full rounds of 200 ms each: 100 ms of rest after each; none after the round that came back short.
    expect(rests).toEqual([100, 100]);
  });

  it('stops between batches once stopping() is true', async () => {
    const log: string[] = [];
    let calls = 0;
    const done = await inRounds([{ batch: 1, steps: [transition('a', log, () => 1, () => calls++)] }], () => calls >= 3, () => 0);
    expect(done).toBe(3);
    expect(log).toEqual(['a:1', 'a:1', 'a:1']);
  });
});
