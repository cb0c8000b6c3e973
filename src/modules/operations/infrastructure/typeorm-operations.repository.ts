import { Injectable } from '@nestjs/common';
import { Db, UNIQUE_VIOLATION, sqlState } from '../../../shared/database/transaction';
import { DomainError, invalidState } from '../../../shared/kernel/errors/domain-error';
import { Page, toPage } from '../../../shared/kernel/pagination/cursor';
import { EventOutbox } from '../../webhooks/application/event-outbox.port';
import { EventRecord } from '../../webhooks/domain/events';
import { subscriberCheckCte, subscriberCheckParams } from '../../webhooks/infrastructure/typeorm-event-outbox';
import { OperationSignals } from '../application/operation-signals.port';
import { OperationListQuery, OperationRepository } from '../application/operations.port';
import { JsonObject, Operation, OperationError, OperationStatus, OperationStep, OperationType } from '../domain/operation';

interface OperationRow {
  id: string;
  org_id: string;
  type: OperationType;
  status: OperationStatus;
  vm_id: string | null;
  volume_id: string | null;
  deployment_id: string | null;
  steps: OperationStep[];
  params: JsonObject;
  result: JsonObject | null;
  error: OperationError | null;
  attempts: number;
  locked_by: string | null;
  locked_until: Date | null;
  created_at: Date;
  created_at_text: string;
  started_at: Date | null;
  finished_at: Date | null;
  step_failures: number;
  step_failing_since: Date | null;
}

const COLUMNS = `id, org_id, type, status, vm_id, volume_id, deployment_id, steps, params, result, error, attempts,
  locked_by, locked_until, created_at, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at_text,
  started_at, finished_at, step_failures, step_failing_since`;

const toOperation = (r: OperationRow): Operation =>
  Operation.restore({
    id: r.id,
    orgId: r.org_id,
    type: r.type,
    status: r.status,
    vmId: r.vm_id,
    volumeId: r.volume_id,
    deploymentId: r.deployment_id,
    steps: r.steps,
    params: r.params,
    result: r.result,
    error: r.error,
    attempts: r.attempts,
    lockedBy: r.locked_by,
    lockedUntil: r.locked_until,
    createdAt: r.created_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    stepFailures: r.step_failures,
    stepFailingSince: r.step_failing_since,
  });

const json = (value: unknown): string | null => (value === null ? null : JSON.stringify(value));

/** The columns an operation is inserted with, and (operationValues) their values in this order. */
export const OPERATION_INSERT_COLUMNS = `id, org_id, type, status, vm_id, volume_id, deployment_id, steps, params, result, error,
  attempts, locked_by, locked_until, created_at, started_at, finished_at`;

/** The values of OPERATION_INSERT_COLUMNS for `operation` (the JSON columns as text). */
export function operationValues(operation: Operation): unknown[] {
  const o = operation.snapshot();
  return [
    o.id, o.orgId, o.type, o.status, o.vmId, o.volumeId, o.deploymentId, json(o.steps), json(o.params), json(o.result),
    json(o.error), o.attempts, o.lockedBy, o.lockedUntil, o.createdAt, o.startedAt, o.finishedAt,
  ];
}

/** 409 invalid_state for a violation of the one-unfinished-operation-per-volume index by an operation of `volumeId`; undefined for any other error. */
export function volumeBusyError(err: unknown, volumeId: string | null): DomainError | undefined {
  const constraint = (err as { driverError?: { constraint?: string } }).driverError?.constraint;
  if (sqlState(err) !== UNIQUE_VIOLATION || constraint !== 'operations_one_active_per_volume') return undefined;
  return invalidState(`Volume ${volumeId} already has an operation pending or running; wait for it to end`);
}

/**
 * 409 invalid_state for a violation of the one-unfinished-vm.*-or-template.*-operation-per-server
 * index (operations_one_unfinished_server_op) by an operation of `vmId`; undefined for any other
 * error. The caller, in a savepoint, names the operation in the way.
 */
export function serverBusyError(err: unknown, vmId: string | null): DomainError | undefined {
  const constraint = (err as { driverError?: { constraint?: string } }).driverError?.constraint;
  if (sqlState(err) !== UNIQUE_VIOLATION || constraint !== 'operations_one_unfinished_server_op') return undefined;
  return invalidState(`Server ${vmId} already has an operation pending or running; wait for it to end`);
}

@Injectable()
export class TypeOrmOperationRepository extends OperationRepository {
  constructor(
    private readonly db: Db,
    private readonly signals: OperationSignals,
    private readonly outbox: EventOutbox,
  ) {
    super();
  }

  async create(operation: Operation): Promise<void> {
    const o = operation.snapshot();
    try {
      await this.db.query(
        `INSERT INTO operations (${OPERATION_INSERT_COLUMNS})
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
        operationValues(operation),
        'operations_create',
      );
    } catch (err) {
      throw volumeBusyError(err, o.volumeId) ?? serverBusyError(err, o.vmId) ?? err;
    }
    if (o.status === 'pending') await this.signals.announceWork();
  }

  async createMany(operations: readonly Operation[]): Promise<void> {
    if (operations.length === 0) return;
    const values = operations.map(operationValues);
    const column = (i: number) => values.map((v) => v[i]);
    await this.db.query(
      `INSERT INTO operations (${OPERATION_INSERT_COLUMNS})
       SELECT id, org_id, type, status, vm_id, volume_id, deployment_id, steps::jsonb, params::jsonb, result::jsonb, error::jsonb,
              attempts, locked_by, locked_until, created_at, started_at, finished_at
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[],
                     $11::text[], $12::int[], $13::text[], $14::timestamptz[], $15::timestamptz[], $16::timestamptz[], $17::timestamptz[])
              AS o(id, org_id, type, status, vm_id, volume_id, deployment_id, steps, params, result, error,
                   attempts, locked_by, locked_until, created_at, started_at, finished_at)`,
      Array.from({ length: 17 }, (_, i) => column(i)),
      'operations_create_many',
    );
    if (operations.some((op) => op.snapshot().status === 'pending')) await this.signals.announceWork();
  }

  async findInOrg(orgId: string, id: string): Promise<Operation | undefined> {
    const row = await this.db.one<OperationRow>(`SELECT ${COLUMNS} FROM operations WHERE org_id = $1 AND id = $2`, [orgId, id], 'operations_find_in_org');
    return row && toOperation(row);
  }

  async list(orgId: string, query: OperationListQuery): Promise<Page<Operation>> {
    const where = ['org_id = $1'];
    const params: unknown[] = [orgId];
    if (query.volumeId !== undefined) {
      params.push(query.volumeId);
      where.push(`volume_id = $${params.length}`);
    }
    if (query.vmId !== undefined) {
      params.push(query.vmId);
      where.push(`vm_id = $${params.length}`);
    }
    if (query.deploymentId !== undefined) {
      params.push(query.deploymentId);
      where.push(`deployment_id = $${params.length}`);
    }
    if (query.status !== undefined) {
      params.push(query.status);
      where.push(`status = $${params.length}`);
    }
    if (query.after) {
      params.push(query.after.createdAt, query.after.id);
      where.push(`(created_at, id) < ($${params.length - 1}::timestamptz, $${params.length})`);
    }
    params.push(query.limit + 1);
    const rows = await this.db.query<OperationRow>(
      `SELECT ${COLUMNS} FROM operations WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT $${params.length}`,
      params,
    );
    return toPage(rows, query.limit, (r) => ({ createdAt: r.created_at_text, id: r.id }), toOperation);
  }

  async hasUnfinishedForVolume(volumeId: string): Promise<boolean> {
    const row = await this.db.one(`SELECT 1 FROM operations WHERE volume_id = $1 AND status IN ('pending', 'running') LIMIT 1`, [volumeId], 'operations_unfinished_for_volume');
    return row !== undefined;
  }

  async unfinishedForVolume(volumeId: string): Promise<string | undefined> {
    const row = await this.db.one<{ id: string }>(
      `SELECT id FROM operations WHERE volume_id = $1 AND status IN ('pending', 'running') LIMIT 1`,
      [volumeId],
      'operations_unfinished_id_for_volume',
    );
    return row?.id;
  }

  /** One statement: the SKIP LOCKED selection and Operation.claim's writes. */
  async claim(workerId: string, now: Date, leaseUntil: Date, limit: number): Promise<string[]> {
    const rows = await this.db.query<{ id: string }>(
      `WITH claimable AS (
         SELECT id, created_at FROM operations
          WHERE status IN ('pending', 'running') AND (status = 'pending' OR locked_until IS NULL OR locked_until < $1)
          ORDER BY created_at, id
          LIMIT $4
          FOR UPDATE SKIP LOCKED
       ), claimed AS (
         UPDATE operations AS o
            SET status = 'running', started_at = coalesce(o.started_at, $1), locked_by = $2, locked_until = $3, attempts = o.attempts + 1
           FROM claimable c
          WHERE o.id = c.id
         RETURNING o.id, o.created_at
       )
       SELECT id FROM claimed ORDER BY created_at, id`,
      [now, workerId, leaseUntil, limit],
      'operations_claim',
    );
    return rows.map((r) => r.id);
  }

  async extendLeases(workerId: string, ids: readonly string[], leaseUntil: Date): Promise<number> {
    if (ids.length === 0) return 0;
    const { affected } = await this.db.exec(
      `UPDATE operations SET locked_until = $3
        WHERE id IN (SELECT id FROM operations WHERE id = ANY($1::text[]) AND status = 'running' AND locked_by = $2 FOR UPDATE SKIP LOCKED)`,
      [ids, workerId, leaseUntil],
      'operations_extend_leases',
    );
    return affected;
  }

  async lock(id: string): Promise<Operation | undefined> {
    const row = await this.db.one<OperationRow>(`SELECT ${COLUMNS} FROM operations WHERE id = $1 FOR UPDATE`, [id], 'operations_lock');
    return row && toOperation(row);
  }

  /**
   * One probe of the primary key per id (LATERAL … LIMIT 1: a nested loop whatever the planner
   * believes about the table's size; a generic plan made while the table was small scanned it
   * whole on every batch). The rows are locked in the order of the sorted ids, so concurrent
   * batches lock their common operations in one order.
   */
  async lockMany(ids: readonly string[]): Promise<Operation[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.query<OperationRow>(
      `SELECT o.* FROM unnest($1::text[]) AS r(id)
         CROSS JOIN LATERAL (SELECT ${COLUMNS} FROM operations WHERE id = r.id LIMIT 1 FOR UPDATE) o
        ORDER BY o.id`,
      [[...new Set(ids)].sort()],
      'operations_lock_many',
    );
    return rows.map(toOperation);
  }

  /**
   * Each row found by one probe of the primary key and updated by its ctid (a nested loop
   * whatever the planner believes about the table's size, as in lockMany). The operations are
   * locked by this transaction (lockMany), so the row versions found are the ones updated.
   */
  /**
   * One statement. With `events`, the same statement also asks which of them an enabled endpoint
   * of their organization subscribes to (subscriberCheckCte: organizations and types only, no
   * bodies); only those are then recorded in the outbox, in this transaction. No endpoint
   * subscribing (the common case), no event body is built or sent and no statement more is made.
   */
  async saveMany(operations: readonly Operation[], events: readonly EventRecord[] = []): Promise<void> {
    if (operations.length === 0) return;
    const all = operations.map((op) => op.snapshot());
    const column = <K extends keyof (typeof all)[number]>(k: K) => all.map((o) => o[k]);
    const params = [
      column('id'), column('status'), all.map((o) => json(o.steps)), all.map((o) => json(o.result)), all.map((o) => json(o.error)),
      column('attempts'), column('lockedBy'), column('lockedUntil'), column('startedAt'), column('finishedAt'),
      column('stepFailures'), column('stepFailingSince'),
    ];
    const update = `UPDATE operations AS o
          SET status = v.status, steps = v.steps::jsonb, result = v.result::jsonb, error = v.error::jsonb, attempts = v.attempts,
              locked_by = v.locked_by, locked_until = v.locked_until, started_at = v.started_at, finished_at = v.finished_at,
              step_failures = v.step_failures, step_failing_since = v.step_failing_since
         FROM (SELECT v.*, t.ctid AS target
                 FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::text[], $8::timestamptz[],
                             $9::timestamptz[], $10::timestamptz[], $11::int[], $12::timestamptz[])
                      AS v(id, status, steps, result, error, attempts, locked_by, locked_until, started_at, finished_at,
                           step_failures, step_failing_since)
                CROSS JOIN LATERAL (SELECT ctid FROM operations WHERE id = v.id LIMIT 1) t) AS v
        WHERE o.ctid = v.target`;
    if (events.length === 0) {
      const { affected } = await this.db.exec(update, params, 'operations_save_many');
      if (affected !== all.length) throw new Error(`Saved ${affected} of ${all.length} operations`);
      return;
    }
    const { rows } = await this.db.exec<{ saved: number; wanted: number[] }>(
      `WITH saved AS (${update} RETURNING 1), ${subscriberCheckCte(13)}
       SELECT (SELECT count(*) FROM saved)::int AS saved, ARRAY(SELECT n FROM wanted ORDER BY n) AS wanted`,
      [...params, ...subscriberCheckParams(events)],
      'operations_save_many_checking_events',
    );
    const saved = rows[0]?.saved ?? 0;
    if (saved !== all.length) throw new Error(`Saved ${saved} of ${all.length} operations`);
    const wanted = rows[0]?.wanted ?? [];
    if (wanted.length > 0) await this.outbox.recordMany(wanted.map((n) => events[n - 1]));
  }

  async save(operation: Operation): Promise<void> {
    const o = operation.snapshot();
    const { affected } = await this.db.exec(
      `UPDATE operations SET status = $2, steps = $3, result = $4, error = $5, attempts = $6, locked_by = $7, locked_until = $8,
              started_at = $9, finished_at = $10, step_failures = $11, step_failing_since = $12
        WHERE id = $1`,
      [
        o.id, o.status, json(o.steps), json(o.result), json(o.error), o.attempts, o.lockedBy, o.lockedUntil, o.startedAt, o.finishedAt,
        o.stepFailures, o.stepFailingSince,
      ],
      'operations_save',
    );
    if (affected !== 1) throw new Error(`Operation ${o.id} does not exist`);
  }
}
