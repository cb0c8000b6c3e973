import { VerifyInvariants } from '../../src/modules/verification/application/verify-invariants.use-case';
import { InMemoryInvariantChecks } from '../../src/modules/verification/testing/in-memory-invariant-checks';
import { InMemoryUnitOfWork } from '../../src/shared/database/in-memory-unit-of-work';
import { FixedClock } from '../../src/shared/kernel/clock/clock';

describe('VerifyInvariants', () => {
  const clock = new FixedClock(new Date('2026-11-23T10:00:00.000Z'));

  it('runs every check in order inside one snapshot and reports ok when none finds anything', async () => {
    const uow = new InMemoryUnitOfWork();
    let inSnapshot = 0;
    const snapshot = uow.readSnapshot.bind(uow);
    uow.readSnapshot = (work) => snapshot(async () => { inSnapshot += 1; return work(); });
    const checks = new InMemoryInvariantChecks([
      { name: 'a.first', description: 'first holds', find: () => [] },
      { name: 'b.second', find: () => [] },
    ]);
    expect(await new VerifyInvariants(uow, checks, clock).execute()).toEqual({
      ok: true,
      checked_at: '2026-11-23T10:00:00.000Z',
      checks: [
        { name: 'a.first', description: 'first holds', violations: 0 },
        { name: 'b.second', description: 'b.second', violations: 0 },
      ],
      violations: [],
    });
    expect(checks.ran).toEqual(['a.first', 'b.second']);
    expect(inSnapshot).toBe(1);
  });

  it('names the check of each violation and counts them per check; a failing check does not hide the others', async () => {
    const checks = new InMemoryInvariantChecks([
      { name: 'wallet.x', find: () => [{ subject: 'org_a/USD', message: 'off by 1', details: { diff: '1' } }] },
      { name: 'ops.y', find: () => [] },
      {
        name: 'servers.z',
        find: () => [
          { subject: 'vm_1', message: 'too many', details: { disks: 9 } },
          { subject: 'vm_2', message: 'too many', details: { disks: 10 } },
        ],
      },
    ]);
    const report = await new VerifyInvariants(new InMemoryUnitOfWork(), checks, clock).execute();
    expect(report.ok).toBe(false);
    expect(report.checks.map((c) => [c.name, c.violations])).toEqual([['wallet.x', 1], ['ops.y', 0], ['servers.z', 2]]);
    expect(report.violations).toEqual([
      { check: 'wallet.x', subject: 'org_a/USD', message: 'off by 1', details: { diff: '1' } },
      { check: 'servers.z', subject: 'vm_1', message: 'too many', details: { disks: 9 } },
      { check: 'servers.z', subject: 'vm_2', message: 'too many', details: { disks: 10 } },
    ]);
  });
});
