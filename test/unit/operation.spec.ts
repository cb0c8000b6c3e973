import { IllegalOperationTransition, Operation } from '../../src/modules/operations/domain/operation';

const T0 = new Date('2026-11-22T10:00:00.000Z');
const later = (ms: number) => new Date(T0.getTime() + ms);

const renewal = () =>
  Operation.create({
    id: 'op_1',
    orgId: 'org_1',
    type: 'volume.renew',
    vmId: 'vm_1',
    volumeId: 'vol_1',
    steps: [{ name: 'renewing', status: 'running' }],
    params: { term_months: 1 },
    createdAt: T0,
  });

describe('Operation state machine', () => {
  it('is created pending, with its steps, nothing ended', () => {
    expect(renewal().snapshot()).toEqual({
      id: 'op_1',
      orgId: 'org_1',
      type: 'volume.renew',
      status: 'pending',
      vmId: 'vm_1',
      volumeId: 'vol_1',
      deploymentId: null,
      steps: [{ name: 'renewing', status: 'running' }],
      params: { term_months: 1 },
      result: null,
      error: null,
      attempts: 0,
      lockedBy: null,
      lockedUntil: null,
      createdAt: T0,
      startedAt: null,
      finishedAt: null,
      stepFailures: 0,
      stepFailingSince: null,
    });
  });

  it("a step deferred (its provider unavailable) stays running, held by no worker until its retry time, the claim not counted; completing it resets the count", () => {
    const op = renewal();
    op.claim('w1', later(30_000), later(1000));
    op.startStep('renewing', later(30_000));
    op.deferStep('w1', later(2000), later(1000));
    expect(op.snapshot()).toMatchObject({ status: 'running', lockedBy: null, lockedUntil: later(2000), attempts: 0, stepFailures: 1, stepFailingSince: later(1000), steps: [{ name: 'renewing', status: 'running' }] });
    expect(op.isHeldBy('w1')).toBe(false);
    expect(() => op.deferStep('w1', later(5000), later(2000))).toThrow(IllegalOperationTransition);
    op.claim('w2', later(40_000), later(3000));
    op.deferStep('w2', later(7000), later(3000));
    expect(op.snapshot()).toMatchObject({ attempts: 0, stepFailures: 2, stepFailingSince: later(1000) });
    op.claim('w3', later(40_000), later(8000));
    op.completeStep('renewing');
    expect(op.snapshot()).toMatchObject({ attempts: 1, stepFailures: 0, stepFailingSince: null });
  });

  it('pending → running when a worker claims it, under a lease', () => {
    const op = renewal();
    op.claim('w1', later(30_000), later(1000));
    expect(op.snapshot()).toMatchObject({ status: 'running', lockedBy: 'w1', lockedUntil: later(30_000), attempts: 1, startedAt: later(1000) });
    expect(op.isHeldBy('w1')).toBe(true);
    expect(op.isHeldBy('w2')).toBe(false);
  });

  it('running → running under another worker only once the lease has expired', () => {
    const op = renewal();
    op.claim('w1', later(30_000), later(0));
    expect(() => op.claim('w2', later(60_000), later(30_000))).toThrow(IllegalOperationTransition);
    expect(op.isHeldBy('w1')).toBe(true);
    op.claim('w2', later(61_000), later(30_001));
    expect(op.snapshot()).toMatchObject({ status: 'running', lockedBy: 'w2', attempts: 2, startedAt: later(0) });
    expect(op.isHeldBy('w1')).toBe(false);
  });

  it('running → succeeded: result kept, steps succeeded, finished_at set, lease ended', () => {
    const op = renewal();
    op.claim('w1', later(30_000), later(0));
    op.succeed({ ok: true }, later(500));
    expect(op.snapshot()).toMatchObject({
      status: 'succeeded',
      result: { ok: true },
      error: null,
      steps: [{ name: 'renewing', status: 'succeeded' }],
      finishedAt: later(500),
      lockedUntil: null,
      lockedBy: 'w1',
    });
    expect(op.isFinished()).toBe(true);
    expect(op.isHeldBy('w1')).toBe(false);
  });

  it('running → failed: error kept, the running step failed, later steps untouched', () => {
    const op = Operation.create({
      id: 'op_2',
      orgId: 'org_1',
      type: 'vm.create',
      vmId: null,
      steps: [
        { name: 'payment_reserved', status: 'succeeded' },
        { name: 'creating_instance', status: 'running' },
        { name: 'booting', status: 'pending' },
      ],
      createdAt: T0,
    });
    op.claim('w1', later(30_000), later(0));
    op.fail({ code: 'provider_unavailable', message: 'down' }, later(700));
    expect(op.snapshot()).toMatchObject({
      status: 'failed',
      error: { code: 'provider_unavailable', message: 'down' },
      result: null,
      finishedAt: later(700),
      steps: [
        { name: 'payment_reserved', status: 'succeeded' },
        { name: 'creating_instance', status: 'failed' },
        { name: 'booting', status: 'pending' },
      ],
    });
  });

  it('refuses every illegal move', () => {
    const pending = renewal();
    expect(() => pending.succeed({}, T0)).toThrow('Operation op_1 cannot succeed from pending');
    expect(() => pending.fail({ code: 'internal', message: 'x' }, T0)).toThrow('Operation op_1 cannot fail from pending');

    const succeeded = renewal();
    succeeded.claim('w1', later(1000), T0);
    succeeded.succeed({}, T0);
    expect(() => succeeded.succeed({}, T0)).toThrow('Operation op_1 cannot succeed from succeeded');
    expect(() => succeeded.fail({ code: 'internal', message: 'x' }, T0)).toThrow(IllegalOperationTransition);
    expect(() => succeeded.claim('w2', later(1000), later(5000))).toThrow('Operation op_1 cannot be claimed from succeeded');

    const failed = renewal();
    failed.claim('w1', later(1000), T0);
    failed.fail({ code: 'internal', message: 'x' }, T0);
    expect(() => failed.succeed({}, T0)).toThrow(IllegalOperationTransition);
    expect(() => failed.claim('w2', later(1000), later(5000))).toThrow(IllegalOperationTransition);
    expect(failed.snapshot().status).toBe('failed');
  });

  it('hands out copies: a snapshot cannot change the operation', () => {
    const op = renewal();
    const s = op.snapshot();
    s.steps[0].status = 'failed';
    s.status = 'succeeded';
    expect(op.snapshot().steps).toEqual([{ name: 'renewing', status: 'running' }]);
    expect(op.status).toBe('pending');
  });
});
