import { ErrorCode } from '../../../shared/kernel/errors/domain-error';

export const OPERATION_TYPES = [
  'vm.create', 'vm.renew', 'vm.delete', 'vm.start', 'vm.stop', 'vm.reboot',
  'volume.create', 'volume.attach', 'volume.detach', 'volume.renew', 'volume.delete', 'vm.suspend', 'volume.suspend',
  'snapshot.create', 'snapshot.renew', 'snapshot.delete',
  'image.create', 'image.renew', 'image.delete',
  'template.deploy', 'template.update', 'template.health', 'template.remove',
  'volume.resize', 'vm.resize', 'vm.rebuild',
  'ip.reserve', 'ip.assign', 'ip.unassign', 'ip.renew', 'ip.release',
  'vm.attach_network', 'vm.detach_network',
] as const;
export type OperationType = (typeof OPERATION_TYPES)[number];

export const OPERATION_STATUSES = ['pending', 'running', 'succeeded', 'failed'] as const;
export type OperationStatus = (typeof OPERATION_STATUSES)[number];

export function isOperationStatus(value: unknown): value is OperationStatus {
  return typeof value === 'string' && (OPERATION_STATUSES as readonly string[]).includes(value);
}

export type StepStatus = 'pending' | 'running' | 'succeeded' | 'failed';
export interface OperationStep {
  name: string;
  status: StepStatus;
}

export interface OperationError {
  code: ErrorCode;
  message: string;
}

export type JsonObject = Record<string, unknown>;

/** Everything an operation holds, as stored. */
export interface OperationState {
  id: string;
  orgId: string;
  type: OperationType;
  status: OperationStatus;
  vmId: string | null;
  volumeId: string | null;
  deploymentId: string | null;
  steps: OperationStep[];
  /** What the executor needs (never shown to the caller). */
  params: JsonObject;
  result: JsonObject | null;
  error: OperationError | null;
  /** How many times a worker claimed it. */
  attempts: number;
  /** The worker holding it (running), or the one that ended it. */
  lockedBy: string | null;
  lockedUntil: Date | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  /** Failed calls of the step in progress to an external service that was unavailable (the step is retried with backoff). */
  stepFailures: number;
  /** When the step in progress first failed so (the retry window counts from it), or null. */
  stepFailingSince: Date | null;
}

/** A move the state machine forbids (a bug, never a caller's mistake). */
export class IllegalOperationTransition extends Error {
  constructor(id: string, from: OperationStatus, action: string) {
    super(`Operation ${id} cannot ${action} from ${from}`);
    this.name = 'IllegalOperationTransition';
  }
}

const copySteps = (steps: OperationStep[]): OperationStep[] => steps.map((s) => ({ name: s.name, status: s.status }));

/**
 * The record of a long action and its state machine:
 * pending → running → succeeded | failed. A running operation carries a worker lease; once the
 * lease has expired another worker may claim it again (its process died). Ended is final.
 */
export class Operation {
  private constructor(private state: OperationState) {}

  static create(input: {
    id: string;
    orgId: string;
    type: OperationType;
    vmId: string | null;
    volumeId?: string | null;
    deploymentId?: string | null;
    steps: OperationStep[];
    params?: JsonObject;
    createdAt: Date;
  }): Operation {
    return new Operation({
      id: input.id,
      orgId: input.orgId,
      type: input.type,
      status: 'pending',
      vmId: input.vmId,
      volumeId: input.volumeId ?? null,
      deploymentId: input.deploymentId ?? null,
      steps: copySteps(input.steps),
      params: { ...(input.params ?? {}) },
      result: null,
      error: null,
      attempts: 0,
      lockedBy: null,
      lockedUntil: null,
      createdAt: new Date(input.createdAt.getTime()),
      startedAt: null,
      finishedAt: null,
      stepFailures: 0,
      stepFailingSince: null,
    });
  }

  static restore(state: Omit<OperationState, 'stepFailures' | 'stepFailingSince'> & Partial<Pick<OperationState, 'stepFailures' | 'stepFailingSince'>>): Operation {
    return new Operation({ ...state, steps: copySteps(state.steps), stepFailures: state.stepFailures ?? 0, stepFailingSince: state.stepFailingSince ?? null });
  }

  /** A copy of the state, for adapters and presenters. */
  snapshot(): OperationState {
    return { ...this.state, steps: copySteps(this.state.steps) };
  }

  get id(): string {
    return this.state.id;
  }
  get orgId(): string {
    return this.state.orgId;
  }
  get type(): OperationType {
    return this.state.type;
  }
  get status(): OperationStatus {
    return this.state.status;
  }
  get volumeId(): string | null {
    return this.state.volumeId;
  }
  get params(): JsonObject {
    return this.state.params;
  }
  get attempts(): number {
    return this.state.attempts;
  }
  get stepFailures(): number {
    return this.state.stepFailures;
  }
  get stepFailingSince(): Date | null {
    return this.state.stepFailingSince;
  }

  isFinished(): boolean {
    return this.state.status === 'succeeded' || this.state.status === 'failed';
  }

  /** Whether `workerId` holds this running operation. */
  isHeldBy(workerId: string): boolean {
    return this.state.status === 'running' && this.state.lockedBy === workerId;
  }

  /**
   * A worker takes the operation until `leaseUntil`: pending → running, or running whose lease
   * has expired (its worker died) → running under the new worker.
   */
  claim(workerId: string, leaseUntil: Date, now: Date): void {
    const s = this.state;
    if (s.status === 'running') {
      if (s.lockedUntil && s.lockedUntil.getTime() >= now.getTime()) {
        throw new IllegalOperationTransition(s.id, s.status, 'be claimed while its lease is valid');
      }
    } else if (s.status !== 'pending') {
      throw new IllegalOperationTransition(s.id, s.status, 'be claimed');
    }
    s.status = 'running';
    s.startedAt = s.startedAt ?? new Date(now.getTime());
    s.lockedBy = workerId;
    s.lockedUntil = new Date(leaseUntil.getTime());
    s.attempts += 1;
  }

  /** The first step not yet succeeded (the one to run next), or undefined when all are. */
  nextStep(): OperationStep | undefined {
    const step = this.state.steps.find((st) => st.status !== 'succeeded');
    return step && { name: step.name, status: step.status };
  }

  /** Records that the held operation's step `name` is in progress, and renews the lease until `leaseUntil`. */
  startStep(name: string, leaseUntil: Date): void {
    this.setStep(name, 'running', 'start a step');
    this.state.lockedUntil = new Date(leaseUntil.getTime());
  }

  /** Records that step `name` is done; the next step (if any) is now the one to run. */
  completeStep(name: string): void {
    this.setStep(name, 'succeeded', 'complete a step');
    this.state.stepFailures = 0;
    this.state.stepFailingSince = null;
  }

  /**
   * The held operation's step in progress could not reach an external service (it was
   * unavailable): the step stays `running` and the operation `running`, held by no worker until
   * `retryAt` (the next claim after it takes the operation again); the failure is counted for the
   * backoff, and this claim is not counted as an attempt.
   */
  deferStep(workerId: string, retryAt: Date, now: Date): void {
    const s = this.state;
    if (!this.isHeldBy(workerId)) throw new IllegalOperationTransition(s.id, s.status, `have its step deferred by ${workerId}`);
    s.stepFailures += 1;
    s.stepFailingSince = s.stepFailingSince ?? new Date(now.getTime());
    s.lockedBy = null;
    s.lockedUntil = new Date(retryAt.getTime());
    s.attempts = Math.max(0, s.attempts - 1);
  }

  /**
   * The worker gives back an operation it claimed and has not started (it is shutting down):
   * running → pending, unclaimed, as if this claim never happened.
   */
  handBack(workerId: string): void {
    const s = this.state;
    if (!this.isHeldBy(workerId)) throw new IllegalOperationTransition(s.id, s.status, `be handed back by ${workerId}`);
    s.status = 'pending';
    s.lockedBy = null;
    s.lockedUntil = null;
    s.attempts = Math.max(0, s.attempts - 1);
    if (s.attempts === 0) s.startedAt = null;
  }

  /**
   * The worker's attempt broke off (a transient database error): the lease ends now, so the next
   * claim, by any worker, takes the operation over (as after a crash, counting an attempt).
   */
  endLease(workerId: string, now: Date): void {
    const s = this.state;
    if (!this.isHeldBy(workerId)) throw new IllegalOperationTransition(s.id, s.status, `have its lease ended by ${workerId}`);
    s.lockedUntil = new Date(now.getTime() - 1);
  }

  private setStep(name: string, status: StepStatus, action: string): void {
    if (this.state.status !== 'running') throw new IllegalOperationTransition(this.state.id, this.state.status, action);
    const step = this.state.steps.find((st) => st.name === name);
    if (!step) throw new Error(`Operation ${this.state.id} has no step ${name}`);
    step.status = status;
  }

  /** running → succeeded: every step done, the result kept, the lease ended. */
  succeed(result: JsonObject, now: Date): void {
    this.end('succeed', now);
    this.state.status = 'succeeded';
    this.state.result = result;
    this.state.steps = this.state.steps.map((st) => ({ name: st.name, status: 'succeeded' }));
  }

  /** running → failed: the step in progress failed, the error kept, the lease ended. */
  fail(error: OperationError, now: Date): void {
    this.end('fail', now);
    this.state.status = 'failed';
    this.state.error = { code: error.code, message: error.message };
    this.state.steps = this.state.steps.map((st) => ({ name: st.name, status: st.status === 'running' ? 'failed' : st.status }));
  }

  /** Ends a running operation. The lease ends; lockedBy stays, naming the worker that finished it. */
  private end(action: string, now: Date): void {
    if (this.state.status !== 'running') throw new IllegalOperationTransition(this.state.id, this.state.status, action);
    this.state.finishedAt = new Date(now.getTime());
    this.state.lockedUntil = null;
  }
}
