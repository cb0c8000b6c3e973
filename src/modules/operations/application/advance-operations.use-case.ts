import { hostname } from 'node:os';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { Settings } from '../../../shared/config/settings';
import { UnitOfWork, WorkerUnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { DomainError } from '../../../shared/kernel/errors/domain-error';
import { randomBase62 } from '../../../shared/kernel/ids/ids';
import { WalletLedger } from '../../wallet/application/wallet.port';
import { EventOutbox, NoEventOutbox } from '../../webhooks/application/event-outbox.port';
import { EventRecord } from '../../webhooks/domain/events';
import { JsonObject, Operation, OperationError } from '../domain/operation';
import { inJsonbOrder, presentOperation } from '../domain/operation-json';
import { OperationExecutors, OperationStepExecutor, StepUnavailable } from './operation-executors';
import { ProviderTruth } from './provider-truth';
import { NoOperationSignals, OperationSignals } from './operation-signals.port';
import { OperationRepository } from './operations.port';
import { NoOperationsTelemetry, OperationsTelemetry } from './operations-telemetry.port';
import { retryWindowClosed, stepRetryDelayMs } from './step-retry';

/** Operations claimed per batch. */
export const CLAIM_BATCH_SIZE = 20;
/**
 * Operations of one batch executed step by step at the same time (their steps call an external
 * service, such as the storage provider, outside any transaction: a slow call must not hold the
 * rest of the batch back until their leases run out). Each step's short transactions take a
 * connection of the worker's pool only while they run.
 */
export const STEPPING_AT_ONCE = 8;
/** Claims after which an operation that keeps dying with its worker is failed instead of retried. */
export const MAX_ATTEMPTS = 5;

export type ExecutionOutcome = 'succeeded' | 'failed' | 'skipped';

export interface AdvanceReport {
  claimed: number;
  succeeded: number;
  failed: number;
  skipped: number;
}

/** An operation whose step (one that calls out) was started in the batch's transaction, held by this worker. */
interface Started {
  step: OperationStepExecutor;
  operation: Operation;
}

/** A started step whose external part has run: its output, to be committed. */
interface Performed extends Started {
  performed: JsonObject;
}

const emptyReport = (): AdvanceReport => ({ claimed: 0, succeeded: 0, failed: 0, skipped: 0 });

type StepTransaction =
  | { kind: 'skipped' }
  | { kind: 'perform'; step: OperationStepExecutor; operation: Operation }
  | { kind: 'next' }
  | { kind: 'succeeded'; operation: Operation };

/**
 * The worker's use case. A claim takes up to CLAIM_BATCH_SIZE operations in one transaction
 * (FOR UPDATE SKIP LOCKED, so any number of processes share the queue without taking the same
 * row) and marks them running under a lease; then each is executed step by step (see
 * OperationStepExecutor): the resource change, the hold's capture and `succeeded` commit
 * together, or nothing does. A DomainError fails the operation with its hold released; any
 * other error (a lost connection, a deadlock) ends the lease so that the next claim retries it,
 * at most MAX_ATTEMPTS times. A process that dies leaves its operations running until the lease
 * ends; then any worker takes them over.
 */
@Injectable()
export class AdvanceOperations {
  readonly workerId = `${hostname()}:${process.pid}:${randomBase62(8)}`;
  private readonly logger = new Logger('AdvanceOperations');

  constructor(
    @Inject(WorkerUnitOfWork) private readonly uow: UnitOfWork,
    private readonly operations: OperationRepository,
    private readonly executors: OperationExecutors,
    private readonly wallet: WalletLedger,
    private readonly clock: Clock,
    private readonly settings: Settings,
    private readonly signals: OperationSignals = new NoOperationSignals(),
    private readonly telemetry: OperationsTelemetry = new NoOperationsTelemetry(),
    private readonly outbox: EventOutbox = new NoEventOutbox(),
  ) {}

  /** Claims one batch and executes it. */
  async runOnce(): Promise<AdvanceReport> {
    const ids = await this.claim(CLAIM_BATCH_SIZE);
    const report: AdvanceReport = { ...emptyReport(), claimed: ids.length };
    for (const outcome of (await this.executeBatch(ids)).values()) report[outcome] += 1;
    return report;
  }

  /** Runs batches until none is claimed (at most `maxBatches`). For tests and the worker's catch-up. */
  async runUntilIdle(maxBatches = 100): Promise<AdvanceReport> {
    const total = emptyReport();
    for (let i = 0; i < maxBatches; i++) {
      const r = await this.runOnce();
      total.claimed += r.claimed;
      total.succeeded += r.succeeded;
      total.failed += r.failed;
      total.skipped += r.skipped;
      if (r.claimed < CLAIM_BATCH_SIZE) break;
    }
    return total;
  }

  /** Claims up to `limit` operations (oldest first) for this worker; their ids. */
  async claim(limit: number): Promise<string[]> {
    const ids = await this.uow.run(async () => {
      const now = this.clock.now();
      const leaseUntil = new Date(now.getTime() + this.settings.workerLeaseMs);
      return this.operations.claim(this.workerId, now, leaseUntil, limit);
    });
    this.telemetry.claimed(ids.length);
    return ids;
  }

  /**
   * Gives back operations this worker claimed and has not started (shutdown): pending again,
   * unclaimed, the attempt not counted; the workers are told there is work.
   */
  async handBack(ids: readonly string[]): Promise<number> {
    if (ids.length === 0) return 0;
    return this.uow.run(async () => {
      const held = (await this.operations.lockMany(ids)).filter((op) => op.isHeldBy(this.workerId));
      for (const op of held) op.handBack(this.workerId);
      await this.operations.saveMany(held);
      if (held.length > 0) await this.signals.announceWork();
      return held.length;
    });
  }

  /**
   * Executes claimed operations together: the steps that have no external part (a renewal's
   * only step) of every operation of the batch commit in ONE transaction. A step that can commit
   * a batch set-based (OperationStepExecutor.commitMany) does so for all its operations at once
   * (a handful of multi-row statements); what it leaves out, and steps without commitMany, run
   * one by one, each in a savepoint, so a DomainError fails that operation alone (its writes
   * undone, its hold released in the same transaction) while the others succeed. Then the
   * operations are saved in one statement (which also records their webhook events) and every
   * hold settled in one (the wallets' rows locked in one order, last, so they stay locked only
   * for the end of the transaction). Any
   * other error rolls the whole batch back and ends the leases for a retry. Operations whose
   * next step calls out, or that have steps left, continue one by one (execute()).
   */
  async executeBatch(ids: readonly string[]): Promise<Map<string, ExecutionOutcome>> {
    const outcomes = new Map<string, ExecutionOutcome>();
    if (ids.length === 0) return outcomes;
    let ended: Operation[] = [];
    let oneByOne: string[] = [];
    const started = new Map<string, Started>();
    try {
      ({ ended, oneByOne } = await this.uow.run(async () => {
        const ops = (await this.operations.lockMany(ids)).sort((a, b) => (a.orgId < b.orgId ? -1 : a.orgId > b.orgId ? 1 : 0));
        const changed: Operation[] = [];
        const done: Operation[] = [];
        const later: string[] = [];
        const leaseUntil = new Date(this.clock.now().getTime() + this.settings.workerLeaseMs);
        // An operation whose next step calls out gets that step's start recorded here, in the
        // batch's transaction (one transaction an operation less); its external part runs below.
        const startHere = (op: Operation): void => {
          const following = this.nextStepOf(op);
          if (following instanceof DomainError || !following.perform) return;
          op.startStep(following.name, leaseUntil);
          started.set(op.id, { step: following, operation: op });
        };
        const stepDone = (op: Operation, result: JsonObject | void): void => {
          op.completeStep(op.nextStep()!.name);
          if (op.nextStep()) {
            startHere(op);
            later.push(op.id);
          } else {
            op.succeed(result ?? {}, this.clock.now());
            outcomes.set(op.id, 'succeeded');
            done.push(op);
          }
          changed.push(op);
        };
        const failed = (op: Operation, err: DomainError): void => {
          op.fail({ code: err.code, message: err.message }, this.clock.now());
          outcomes.set(op.id, 'failed');
          done.push(op);
          changed.push(op);
        };
        // The commit-only steps of the batch, grouped by step; the others continue one by one.
        const groups = new Map<OperationStepExecutor, Operation[]>();
        for (const op of ops) {
          if (!op.isHeldBy(this.workerId)) {
            outcomes.set(op.id, 'skipped');
            continue;
          }
          const executor = this.executors.get(op.type);
          if (executor?.compensate || executor?.failed) {
            // Their failure has its own transaction work (and calls outside it): never failed
            // here, but a next step that calls out (a purchase's first) is started all the same.
            startHere(op);
            if (started.has(op.id)) changed.push(op);
            later.push(op.id);
            continue;
          }
          const step = this.nextStepOf(op);
          if (step instanceof DomainError) failed(op, step);
          else if (step.perform) {
            startHere(op);
            if (started.has(op.id)) changed.push(op);
            later.push(op.id);
          } else groups.set(step, [...(groups.get(step) ?? []), op]);
        }
        await this.commitGroups(groups, undefined, stepDone, failed);
        // The same statement tells which ended operations' webhook events an enabled endpoint
        // subscribes to; only those are built and recorded (no endpoint: nothing more is sent).
        await this.operations.saveMany(changed, done.map(endedEvent));
        await this.signals.announceEnded(done.map((op) => op.id));
        // The holds last: the wallets' rows stay locked only for the end of the transaction.
        await this.wallet.settleMany(
          done.filter((op) => op.status === 'succeeded').map((op) => op.id),
          done.filter((op) => op.status === 'failed').map((op) => op.id),
        );
        return { ended: done, oneByOne: later };
      }));
    } catch (err) {
      // Nothing of the batch was committed.
      for (const id of ids) outcomes.set(id, await this.retryLater(id, err));
      return outcomes;
    }
    for (const op of ended) this.reportEnded(op);
    const keeping = this.keepLeases(() => oneByOne.filter((id) => !outcomes.has(id)));
    try {
      // Operations whose started step calls out and commits set-based (a suspension): performed
      // side by side, then committed together (performTogether). The others, and what that
      // leaves, go on in onward(): together when their step was started (stepTogether), else one
      // by one.
      // (Never an operation whose failure has hooks of its own: performTogether fails one in its transaction.)
      const setBased = oneByOne.filter((id) => {
        const s = started.get(id);
        const executor = s && this.executors.get(s.operation.type);
        return s?.step.commitMany !== undefined && !executor?.compensate && !executor?.failed;
      });
      const inSet = new Set(setBased);
      await Promise.all([
        this.onward(oneByOne.filter((id) => !inSet.has(id)), started, outcomes),
        this.performTogether(setBased, started, outcomes).then((rest) => this.onward(rest, started, outcomes)),
      ]);
    } finally {
      keeping.stop();
    }
    for (const id of ids) if (!outcomes.has(id)) outcomes.set(id, 'skipped'); // vanished
    return outcomes;
  }

  /**
   * Operations of a batch that go on without a set-based step: those whose step calling out was
   * started (in the batch's transaction or performTogether's) together (stepTogether), the others
   * one by one (execute()), side by side (each call waits on the provider, not on this process or
   * the database), at most STEPPING_AT_ONCE of them at a time.
   */
  private async onward(ids: readonly string[], started: Map<string, Started>, outcomes: Map<string, ExecutionOutcome>): Promise<void> {
    const alone = ids.filter((id) => !started.has(id));
    let next = 0;
    const stepper = async (): Promise<void> => {
      while (next < alone.length) {
        const id = alone[next++];
        outcomes.set(id, await this.execute(id));
      }
    };
    await Promise.all([
      this.stepTogether(ids.flatMap((id) => started.get(id) ?? []), outcomes),
      ...Array.from({ length: Math.min(STEPPING_AT_ONCE, alone.length) }, stepper),
    ]);
  }

  /**
   * The operations of a batch whose step calling out was started, stepped together: each step's
   * external part (`perform`) runs outside any transaction, at most STEPPING_AT_ONCE at a time;
   * the steps performed meanwhile are then committed together in ONE transaction (commitSteps),
   * which also starts their next step that calls out (performed next, as soon as it committed) or
   * ends the operation (its hold captured). So a purchase's steps cost one provider call each
   * plus their share of a transaction, not a transaction of their own each. A perform that fails
   * is handled as in execute() (a DomainError fails that operation alone, with the provider read
   * first; StepUnavailable defers it; anything else ends its lease).
   */
  private async stepTogether(initial: readonly Started[], outcomes: Map<string, ExecutionOutcome>): Promise<void> {
    const waiting: Started[] = [...initial];
    const performed: Performed[] = [];
    let performing = 0;
    let committing = false;
    let wake: (() => void) | undefined;
    const poke = (): void => {
      const w = wake;
      wake = undefined;
      w?.();
    };
    const perform = async ({ step, operation }: Started): Promise<void> => {
      try {
        performed.push({ step, operation, performed: await step.perform!(operation) });
      } catch (err) {
        outcomes.set(operation.id, await this.stepFailed(operation.id, err));
      }
    };
    for (;;) {
      while (waiting.length > 0 && performing < STEPPING_AT_ONCE) {
        performing += 1;
        void perform(waiting.shift()!).finally(() => {
          performing -= 1;
          poke();
        });
      }
      if (performed.length > 0 && !committing) {
        committing = true;
        void this.commitSteps(performed.splice(0), outcomes)
          .then((following) => waiting.push(...following))
          .finally(() => {
            committing = false;
            poke();
          });
      }
      if (waiting.length === 0 && performed.length === 0 && performing === 0 && !committing) return;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  }

  /**
   * One transaction for performed steps of several operations: each still held by this worker
   * has its step committed (`commit`, with perform's output), then the steps after it that do not
   * call out, then either its next step started (returned, to be performed) or the operation
   * succeeded. The operations are saved in one statement (their webhook events with it), and the
   * holds of those that ended captured in one, last (settleMany: the wallets' rows locked in one
   * order). When anything throws (a DomainError of a commit, a deadlock, a lost connection),
   * nothing of it was written and each operation goes on alone (execute(), from its performed
   * step: a DomainError then fails that operation only, through fail()). Never throws.
   */
  private async commitSteps(chunk: readonly Performed[], outcomes: Map<string, ExecutionOutcome>): Promise<Started[]> {
    const byId = new Map(chunk.map((p) => [p.operation.id, p]));
    let result: { following: Started[]; ended: Operation[]; elsewhere: string[] };
    try {
      result = await this.uow.run(async () => {
        const ops = await this.operations.lockMany([...byId.keys()]);
        const following: Started[] = [];
        const changed: Operation[] = [];
        const done: Operation[] = [];
        const elsewhere: string[] = [];
        const now = this.clock.now();
        const leaseUntil = new Date(now.getTime() + this.settings.workerLeaseMs);
        for (const op of ops) {
          const step = byId.get(op.id)!;
          if (!op.isHeldBy(this.workerId)) {
            elsewhere.push(op.id);
            continue;
          }
          // Not at the step this worker performed (never while it holds the lease): left to the lease takeover.
          if (op.nextStep()?.name !== step.step.name) {
            elsewhere.push(op.id);
            continue;
          }
          let output = await step.step.commit(op, step.performed);
          op.completeStep(step.step.name);
          for (;;) {
            if (!op.nextStep()) {
              // Its own time, after the commits above: a step's commit may compute from the clock
              // (a purchase's expires_at = now + term), and finished_at is never before it.
              op.succeed(output ?? {}, this.clock.now());
              done.push(op);
              break;
            }
            const next = this.nextStepOf(op);
            if (next instanceof DomainError) throw next;
            if (next.perform) {
              op.startStep(next.name, leaseUntil);
              following.push({ step: next, operation: op });
              break;
            }
            output = await next.commit(op, undefined);
            op.completeStep(next.name);
          }
          changed.push(op);
        }
        await this.operations.saveMany(changed, done.map(endedEvent));
        await this.signals.announceEnded(done.map((op) => op.id));
        // The holds last: the wallets' rows stay locked only for the end of the transaction.
        await this.wallet.settleMany(done.map((op) => op.id), []);
        return { following, ended: done, elsewhere };
      });
    } catch (err) {
      // Nothing of it was written: each operation alone, from its performed step.
      if (!(err instanceof DomainError)) {
        this.logger.warn({ msg: 'a transaction of several operations\' steps was rolled back; each goes on alone', operations: chunk.length, err: describe(err) });
      }
      for (const p of chunk) outcomes.set(p.operation.id, await this.execute(p.operation.id, undefined, p.performed));
      return [];
    }
    for (const id of result.elsewhere) outcomes.set(id, 'skipped');
    for (const op of result.ended) {
      outcomes.set(op.id, 'succeeded');
      this.reportEnded(op);
    }
    const goingOn = new Set(result.following.map((f) => f.operation.id));
    for (const id of byId.keys()) if (!outcomes.has(id) && !goingOn.has(id)) outcomes.set(id, 'skipped'); // vanished
    return result.following;
  }

  /**
   * Operations of a batch whose started step calls out (`perform`) and can commit set-based
   * (`commitMany`): every external part runs first, side by side (at most STEPPING_AT_ONCE at a
   * time, outside any transaction), then the steps of all those that performed commit in ONE
   * transaction, as executeBatch's commit-only steps do: commitMany for each step's operations
   * (what it leaves out commit() decides alone, in a savepoint), the operations saved in one
   * statement with their webhook events, the holds settled in one. An operation whose next step
   * calls out and commits set-based too has that step started in the same transaction and goes
   * round again. A failed external part is handled as execute() handles it (a DomainError fails
   * the operation, an unavailable provider defers the step, anything else ends the lease); an
   * error of the transaction (not a DomainError) rolls it back and ends the leases, so the
   * steps are performed again (they are idempotent by operation and step). The operations left
   * to continue one by one (a next step that does not commit set-based), in `started` when that
   * step was started here.
   */
  private async performTogether(ids: readonly string[], started: Map<string, Started>, outcomes: Map<string, ExecutionOutcome>): Promise<string[]> {
    const rest: string[] = [];
    let current = [...ids];
    while (current.length > 0) {
      const performed = new Map<string, JsonObject>();
      let next = 0;
      const performer = async (): Promise<void> => {
        while (next < current.length) {
          const id = current[next++];
          const { step, operation } = started.get(id)!;
          try {
            performed.set(id, await step.perform!(operation));
          } catch (err) {
            started.delete(id);
            outcomes.set(id, await this.stepFailed(id, err));
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(STEPPING_AT_ONCE, current.length) }, performer));
      current = await this.commitPerformed(performed, started, outcomes, rest);
    }
    return rest;
  }

  /** performTogether's transaction: commits the performed steps; the operations to go round again (their next step started). */
  private async commitPerformed(
    performed: Map<string, JsonObject>,
    started: Map<string, Started>,
    outcomes: Map<string, ExecutionOutcome>,
    rest: string[],
  ): Promise<string[]> {
    if (performed.size === 0) return [];
    const ids = [...performed.keys()];
    let ended: Operation[];
    let again: string[];
    let alone: string[];
    try {
      ({ ended, again, alone } = await this.uow.run(async () => {
        const ops = (await this.operations.lockMany(ids)).sort((a, b) => (a.orgId < b.orgId ? -1 : a.orgId > b.orgId ? 1 : 0));
        const changed: Operation[] = [];
        const done: Operation[] = [];
        const round: string[] = [];
        const later: string[] = [];
        const leaseUntil = new Date(this.clock.now().getTime() + this.settings.workerLeaseMs);
        const groups = new Map<OperationStepExecutor, Operation[]>();
        for (const op of ops) {
          const step = started.get(op.id)?.step;
          started.delete(op.id);
          // Another worker took it over (our lease ended) or it ended meanwhile: not ours to run.
          if (!op.isHeldBy(this.workerId)) {
            outcomes.set(op.id, 'skipped');
            continue;
          }
          const expected = this.nextStepOf(op);
          if (!step || expected !== step) {
            // Not the step performed (cannot happen while we hold it): one by one, from what it records.
            later.push(op.id);
            continue;
          }
          groups.set(step, [...(groups.get(step) ?? []), op]);
        }
        const stepDone = (op: Operation, result: JsonObject | void): void => {
          op.completeStep(op.nextStep()!.name);
          changed.push(op);
          if (!op.nextStep()) {
            op.succeed(result ?? {}, this.clock.now());
            outcomes.set(op.id, 'succeeded');
            done.push(op);
            return;
          }
          const following = this.nextStepOf(op);
          if (!(following instanceof DomainError) && following.perform) {
            op.startStep(following.name, leaseUntil);
            started.set(op.id, { step: following, operation: op });
            (following.commitMany ? round : later).push(op.id);
          } else later.push(op.id);
        };
        await this.commitGroups(groups, performed, stepDone, (op, err) => {
          op.fail({ code: err.code, message: err.message }, this.clock.now());
          outcomes.set(op.id, 'failed');
          done.push(op);
          changed.push(op);
        });
        await this.operations.saveMany(changed, done.map(endedEvent));
        await this.signals.announceEnded(done.map((op) => op.id));
        await this.wallet.settleMany(
          done.filter((op) => op.status === 'succeeded').map((op) => op.id),
          done.filter((op) => op.status === 'failed').map((op) => op.id),
        );
        return { ended: done, again: round, alone: later };
      }));
    } catch (err) {
      // Nothing was committed: the leases end, and the next claim performs the steps again.
      for (const id of ids) {
        started.delete(id);
        outcomes.set(id, await this.retryLater(id, err));
      }
      return [];
    }
    for (const op of ended) this.reportEnded(op);
    rest.push(...alone);
    return again;
  }

  /**
   * In the caller's transaction, each group's step committed set-based: `commitMany` for the
   * group (with what each `perform` returned, when the step called out), then `commit()` in a
   * savepoint for each operation it left out, whose DomainError fails that operation alone
   * (`failed`; its writes undone). Any other error rolls the caller's transaction back.
   */
  private async commitGroups(
    groups: ReadonlyMap<OperationStepExecutor, Operation[]>,
    performed: ReadonlyMap<string, JsonObject> | undefined,
    stepDone: (op: Operation, result: JsonObject | void) => void,
    failed: (op: Operation, err: DomainError) => void,
  ): Promise<void> {
    for (const [step, group] of groups) {
      const results = step.commitMany ? await step.commitMany(group, performed) : new Map<string, JsonObject>();
      for (const op of group) {
        const result = results.get(op.id);
        if (result !== undefined) {
          stepDone(op, result);
          continue;
        }
        try {
          stepDone(op, await this.uow.savepoint(() => step.commit(op, performed?.get(op.id))));
        } catch (err) {
          if (!(err instanceof DomainError)) throw err;
          failed(op, err);
        }
      }
    }
  }

  /**
   * While a batch's operations wait for their turn (STEPPING_AT_ONCE at a time, each step waiting
   * on its provider), their leases are extended every third of WORKER_LEASE_MS: a slow provider
   * or a loaded machine must not let another worker take over an operation this live worker
   * holds, which would count an attempt for nothing and, after MAX_ATTEMPTS, fail an operation
   * that never broke. A worker that dies stops extending: its leases run out as before.
   */
  private keepLeases(waiting: () => string[]): { stop: () => void } {
    const periodMs = Math.max(50, Math.floor(this.settings.workerLeaseMs / 3));
    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    const tick = async (): Promise<void> => {
      const ids = waiting();
      if (stopped || ids.length === 0) return;
      try {
        await this.uow.run(() => this.operations.extendLeases(this.workerId, ids, new Date(this.clock.now().getTime() + this.settings.workerLeaseMs)));
      } catch (err) {
        this.logger.warn({ msg: 'could not extend the leases of a batch; they may run out', operations: ids.length, err: describe(err) });
      }
      if (!stopped) timer = setTimeout(() => void tick(), periodMs).unref();
    };
    timer = setTimeout(() => void tick(), periodMs).unref();
    return {
      stop: () => {
        stopped = true;
        clearTimeout(timer);
      },
    };
  }

  /** The executor's step to run next, or the DomainError that fails the operation instead. */
  private nextStepOf(op: Operation): OperationStepExecutor | DomainError {
    if (op.attempts > MAX_ATTEMPTS) return new DomainError('internal', `The operation was abandoned after ${MAX_ATTEMPTS} interrupted attempts`);
    const executor = this.executors.get(op.type);
    if (!executor) return new DomainError('internal', `Operations of type ${op.type} cannot be executed`);
    const next = op.nextStep();
    const step = next && executor.steps.find((s) => s.name === next.name);
    return step ?? new DomainError('internal', `Operation ${op.id} has no step its executor knows`);
  }

  /**
   * Executes one claimed operation, step after step, until it ends or is no longer ours.
   * Never throws: a failure to record anything leaves the operation to the lease takeover.
   */
  async execute(id: string, started?: Started, alreadyPerformed?: JsonObject): Promise<ExecutionOutcome> {
    // A step whose external part ran already (a transaction of several operations rolled back): committed first.
    let performed: JsonObject | undefined = alreadyPerformed;
    // A step the batch's transaction started: its external part first, without a transaction of its own.
    let first = started;
    try {
      for (;;) {
        if (first) {
          const { step, operation } = first;
          first = undefined;
          performed = await step.perform!(operation);
          continue;
        }
        const tx = await this.stepTransaction(id, performed);
        if (tx.kind === 'skipped') return 'skipped';
        if (tx.kind === 'succeeded') {
          this.reportEnded(tx.operation);
          return 'succeeded';
        }
        if (tx.kind === 'next') {
          performed = undefined;
          continue;
        }
        // The slow part, outside any transaction and row lock.
        performed = await tx.step.perform!(tx.operation);
      }
    } catch (err) {
      return this.stepFailed(id, err);
    }
  }

  /** A step of the operation threw: a DomainError fails it, an unavailable service defers the step, anything else ends the lease. */
  private stepFailed(id: string, err: unknown): Promise<ExecutionOutcome> {
    if (err instanceof DomainError) return this.fail(id, { code: err.code, message: err.message });
    if (err instanceof StepUnavailable) return this.retryStepLater(id, err);
    return this.retryLater(id, err);
  }

  /**
   * The step's external service was unavailable: the step is retried after a backoff (1 s, 2 s,
   * 4 s … 60 s; PROVIDER_RETRY_BASE_MS) by whichever worker claims the operation then, without
   * counting an attempt; once PROVIDER_RETRY_WINDOW_MS has passed since its first failure, the
   * operation fails with the StepUnavailable's code (and gives everything back, see fail()).
   */
  private async retryStepLater(id: string, err: StepUnavailable): Promise<ExecutionOutcome> {
    let decision: 'skipped' | 'deferred' | 'give-up';
    try {
      decision = await this.uow.run(async () => {
        const op = await this.operations.lock(id);
        if (!op || !op.isHeldBy(this.workerId)) return 'skipped';
        const now = this.clock.now();
        if (retryWindowClosed(op.stepFailingSince ?? now, now, this.settings.providerRetryWindowMs)) return 'give-up';
        const retryAt = new Date(now.getTime() + stepRetryDelayMs(op.stepFailures + 1, this.settings.providerRetryBaseMs));
        op.deferStep(this.workerId, retryAt, now);
        await this.operations.save(op);
        this.logger.log({ msg: 'operation step deferred: its external service is unavailable', operation_id: id, failures: op.stepFailures, retry_at: retryAt.toISOString(), err: err.message });
        return 'deferred';
      });
    } catch (again) {
      return this.retryLater(id, again);
    }
    if (decision !== 'give-up') return 'skipped';
    const minutes = Math.round(this.settings.providerRetryWindowMs / 6_000) / 10;
    return this.fail(id, { code: err.code, message: `The ${err.provider} stayed unavailable for ${minutes} minutes: ${err.message}` });
  }

  /**
   * One transaction on the locked operation: records its next step running (when the step has
   * an external part not yet performed), or commits that step (and, after the last, the
   * operation's success with its hold captured).
   */
  private stepTransaction(id: string, performed: JsonObject | undefined): Promise<StepTransaction> {
    return this.uow.run(async (): Promise<StepTransaction> => {
      const op = await this.operations.lock(id);
      // Another worker took it over (our lease ended) or it ended meanwhile: not ours to run.
      if (!op || !op.isHeldBy(this.workerId)) return { kind: 'skipped' };
      const step = this.nextStepOf(op);
      if (step instanceof DomainError) throw step;
      if (step.perform && performed === undefined) {
        op.startStep(step.name, new Date(this.clock.now().getTime() + this.settings.workerLeaseMs));
        await this.operations.save(op);
        return { kind: 'perform', step, operation: op };
      }
      const result = await step.commit(op, performed);
      op.completeStep(step.name);
      if (op.nextStep()) {
        // The next step's start recorded in this same transaction when it calls out (one
        // transaction a step less): its external part then runs at once, as after a start of its own.
        const following = this.nextStepOf(op);
        if (!(following instanceof DomainError) && following.perform) {
          op.startStep(following.name, new Date(this.clock.now().getTime() + this.settings.workerLeaseMs));
          await this.operations.save(op);
          return { kind: 'perform', step: following, operation: op };
        }
        await this.operations.save(op);
        return { kind: 'next' };
      }
      op.succeed(result ?? {}, this.clock.now());
      await this.wallet.capture(op.id);
      await this.operations.save(op);
      await this.outbox.record(endedEvent(op));
      await this.signals.announceEnded([op.id]);
      return { kind: 'succeeded', operation: op };
    });
  }

  /** The step's transaction rolled back: the resource is untouched. Fail it and give the hold back. */
  private async fail(id: string, failure: OperationError): Promise<ExecutionOutcome> {
    let ended: Operation | undefined;
    try {
      // Before giving anything back: what the provider holds now (outside any transaction).
      const truth = await this.observe(id);
      ended = await this.uow.run(async () => {
        const op = await this.operations.lock(id);
        if (!op || !op.isHeldBy(this.workerId)) return undefined;
        op.fail(failure, this.clock.now());
        await this.executors.get(op.type)?.failed?.(op, failure, truth);
        await this.wallet.release(op.id);
        await this.operations.save(op);
        await this.outbox.record(endedEvent(op));
        await this.signals.announceEnded([op.id]);
        return op;
      });
    } catch (err) {
      return this.retryLater(id, err);
    }
    if (!ended) return 'skipped';
    this.reportEnded(ended);
    await this.compensate(ended);
    return 'failed';
  }

  /** The executor's reading of the provider's truth about the operation's resource, when it observes. */
  private async observe(id: string): Promise<ProviderTruth<unknown> | undefined> {
    const op = await this.uow.run(() => this.operations.lock(id));
    const executor = op && this.executors.get(op.type);
    if (!op || !executor?.observe) return undefined;
    return executor.observe(op);
  }

  /**
   * The executor's compensation, outside any transaction, once the failure is recorded (so that
   * a step resumed after a crash can never build on something already undone). Best effort: what
   * it cannot undo (the provider unreachable, or this process dying first) `cli verify` reports,
   * and for a purchase's disk the orphan sweep deletes it later.
   */
  private async compensate(op: Operation): Promise<void> {
    const executor = this.executors.get(op.type);
    if (!executor?.compensate) return;
    try {
      await executor.compensate(op);
    } catch (err) {
      this.logger.warn({ msg: 'could not undo the external effects of a failed operation; `cli verify` reports what is left', operation_id: op.id, err: describe(err) });
    }
  }

  /**
   * Not a DomainError: a lost connection, a terminated backend, a deadlock, a bug. Nothing of the
   * step was committed; end the lease so that the next claim (any worker's) retries it, within
   * MAX_ATTEMPTS. If even that cannot be written, the lease simply runs out.
   */
  private async retryLater(id: string, err: unknown): Promise<ExecutionOutcome> {
    this.logger.warn({
      msg: 'operation step interrupted (not a DomainError: a lost connection, a terminated backend, a deadlock, a bug); it will be retried',
      operation_id: id,
      err: describe(err),
    });
    try {
      await this.uow.run(async () => {
        const op = await this.operations.lock(id);
        if (!op || !op.isHeldBy(this.workerId)) return;
        op.endLease(this.workerId, this.clock.now());
        await this.operations.save(op);
        await this.signals.announceWork();
      });
    } catch (again) {
      this.logger.warn({ msg: 'could not end the lease; it will run out', operation_id: id, err: describe(again) });
    }
    return 'skipped';
  }

  private reportEnded(op: Operation): void {
    const s = op.snapshot();
    if (s.status !== 'succeeded' && s.status !== 'failed') return;
    const seconds = Math.max(0, ((s.finishedAt ?? this.clock.now()).getTime() - s.createdAt.getTime()) / 1000);
    this.telemetry.ended(s.type, s.status, seconds);
  }
}

/** The event of an ended operation: operation.succeeded or operation.failed, its data the Operation as GET returns it. */
export function endedEvent(op: Operation): EventRecord {
  const presented = presentOperation(op);
  // result and error as GET reads them back from their jsonb columns.
  const data = { ...presented, result: inJsonbOrder(presented.result), error: inJsonbOrder(presented.error) };
  return { orgId: op.orgId, type: data.status === 'succeeded' ? 'operation.succeeded' : 'operation.failed', createdAt: op.snapshot().finishedAt ?? new Date(data.created_at), data };
}

function describe(err: unknown): { name: string; message: string; code?: string } | string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as { code?: unknown; driverError?: { code?: unknown } }).driverError?.code ?? (err as { code?: unknown }).code;
  return { name: err.name, message: err.message, ...(typeof code === 'string' ? { code } : {}) };
}
