import { Injectable } from '@nestjs/common';
import { Db } from '../../../shared/database/transaction';
import { AUDIT_INSERT_COLUMNS, auditValues } from '../../audit/infrastructure/typeorm-audit-trail';
import { LEDGER_POSITIONED_COLUMNS, NEW_LEDGER_PUBLIC_ID } from '../../wallet/infrastructure/typeorm-wallet-ledger';
import { AcceptanceOutcome, OperationAcceptance, OperationToAccept } from '../application/operation-acceptance.port';
import { Money } from '../../../shared/kernel/money/money';
import { Operation } from '../domain/operation';
import { OperationSignals } from '../application/operation-signals.port';
import { OperationRepository } from '../application/operations.port';
import { OPERATION_INSERT_COLUMNS, operationValues } from './typeorm-operations.repository';

/**
 * $1–$17 the operation (OPERATION_INSERT_COLUMNS), $18 the hold's amount (NULL: none), $19 its
 * currency, $20–$30 the audit entry. `wallet` locks the balance row first (FOR NO KEY UPDATE
 * answers its latest version, after waiting for any other holder); the operation is inserted
 * only if that balance covers the hold, and the one-unfinished-operation-per-volume index
 * decides whether the volume is free (ON CONFLICT … DO NOTHING: no plan to choose, and an
 * uncommitted operation of the volume is waited for); the hold, its ledger row and the audit
 * entry are written only for an inserted operation. The hold's ledger row gets its position here,
 * set-based, not from wallet_ledger's row trigger (which runs only for rows inserted without a
 * `seq`): `head` takes the organization's wallet_heads row (its next seq; created_at never before
 * the previous row's), and the after-values are the locked balance minus the hold (the balance is
 * the ledger's running sum, so this is the previous row's after-value plus the movement). The
 * audit entry waits for the ledger row (its subquery on `hold`), so the locks come in the order
 * every writer takes them: the balance row, the ledger head, the audit head.
 *
 * The hold's new balance is computed from `wallet`'s row (the locked, latest version, which no
 * one else can change until this transaction ends), never from the row the UPDATE finds in the
 * statement's snapshot: PostgreSQL checks a CHECK constraint on the new row computed from the
 * snapshot's version *before* it finds that version was updated since and re-evaluates on the
 * latest one (EvalPlanQual). A credit or a release committed between the statement's start and
 * the lock left the snapshot's balance lower than the locked one, and `available - amount` from
 * the snapshot was refused by wallet_available_not_negative although the balance covered it.
 */
const ACCEPT_SQL = `
  WITH wallet AS (
    SELECT available, reserved FROM wallet_balances
     WHERE org_id = $2::text AND currency = $19::text AND $18::numeric IS NOT NULL
       FOR NO KEY UPDATE
  ), accepted AS (
    INSERT INTO operations (${OPERATION_INSERT_COLUMNS})
    SELECT $1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::text, $8::jsonb, $9::jsonb, $10::jsonb, $11::jsonb,
           $12::int, $13::text, $14::timestamptz, $15::timestamptz, $16::timestamptz, $17::timestamptz
     WHERE $18::numeric IS NULL OR (SELECT available FROM wallet) >= $18::numeric
    ON CONFLICT (volume_id) WHERE status IN ('pending', 'running') AND volume_id IS NOT NULL DO NOTHING
    RETURNING id
  ), held AS (
    UPDATE wallet_balances b
       SET available = w.available - $18::numeric, reserved = w.reserved + $18::numeric, updated_at = now()
      FROM wallet w
     WHERE b.org_id = $2::text AND b.currency = $19::text AND $18::numeric IS NOT NULL AND EXISTS (SELECT 1 FROM accepted)
  ), head AS (
    INSERT INTO wallet_heads AS h (org_id, last_seq, last_at)
    SELECT $2::text, 1, now() FROM accepted WHERE $18::numeric IS NOT NULL
    ON CONFLICT (org_id) DO UPDATE SET last_seq = h.last_seq + 1, last_at = greatest(h.last_at, EXCLUDED.last_at)
    RETURNING last_seq, last_at
  ), hold AS (
    INSERT INTO wallet_ledger (${LEDGER_POSITIONED_COLUMNS})
    SELECT $2::text, $19::text, 'hold', $18::numeric, a.id, 'reserved for operation',
           ${NEW_LEDGER_PUBLIC_ID}, h.last_seq, h.last_at, w.available - $18::numeric, w.reserved + $18::numeric
      FROM accepted a, head h, wallet w
    RETURNING 1 AS appended
  ), audited AS (
    INSERT INTO audit_log (${AUDIT_INSERT_COLUMNS})
    SELECT $20::text, $21::text, $22::text, $23::text, $24::text, $25::text, $26::text, $27::text, $28::text, $29::jsonb, $30::text FROM accepted
     WHERE (SELECT count(*) FROM hold) >= 0
  )
  SELECT EXISTS (SELECT 1 FROM accepted) AS accepted, (SELECT available::text FROM wallet) AS available`;

/**
 * acceptMany's statement: ACCEPT_SQL for a batch, its inputs as arrays (unnest WITH ORDINALITY:
 * $1–$17 the operations' columns, $18 the holds' amounts (NULL: none), $19 their currencies,
 * $20–$30 the audit entries'). The balance rows concerned are locked first, in (org_id, currency)
 * order, each by one probe of the primary key (FOR NO KEY UPDATE: the latest version); an
 * operation is `covered` when the running sum of its organization's holds in that currency, in the
 * order given, is within the locked balance (amounts are positive: the covered ones are a prefix).
 * The covered operations are inserted (ON CONFLICT DO NOTHING: either index of one unfinished
 * operation per volume or per server refuses a busy one without an error); the holds of those
 * inserted are appended with their positions computed set-based (as settleMany: each
 * organization's wallet_heads row advanced once by its number of rows, after its balance rows;
 * the after-values as running sums from the locked balances) and each balance row written once
 * from its locked version; the audit entries of the inserted operations last, in organization
 * order (their trigger takes each organization's audit head: the lock order of every writer).
 */
const ACCEPT_MANY_SQL = `
  WITH input AS MATERIALIZED (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[],
                         $11::text[], $12::int[], $13::text[], $14::timestamptz[], $15::timestamptz[], $16::timestamptz[], $17::timestamptz[],
                         $18::numeric[], $19::text[])
      WITH ORDINALITY AS i(id, org_id, type, status, vm_id, volume_id, deployment_id, steps, params, result, error,
                           attempts, locked_by, locked_until, created_at, started_at, finished_at, amount, currency, n)
  ), pairs AS MATERIALIZED (
    SELECT DISTINCT org_id, currency FROM input WHERE amount IS NOT NULL ORDER BY org_id, currency
  ), locked AS MATERIALIZED (
    SELECT b.org_id, b.currency, b.available, b.reserved FROM pairs p
     CROSS JOIN LATERAL (SELECT org_id, currency, available, reserved FROM wallet_balances
                          WHERE org_id = p.org_id AND currency = p.currency LIMIT 1 FOR NO KEY UPDATE) b
  ), decided AS MATERIALIZED (
    SELECT i.*, x.running, l.available AS balance,
           i.amount IS NULL OR coalesce(x.running <= l.available, false) AS covered
      FROM input i
      LEFT JOIN (SELECT n, sum(amount) OVER (PARTITION BY org_id, currency ORDER BY n ROWS UNBOUNDED PRECEDING) AS running
                   FROM input WHERE amount IS NOT NULL) x ON x.n = i.n
      LEFT JOIN locked l ON l.org_id = i.org_id AND l.currency = i.currency
  ), accepted AS (
    INSERT INTO operations (${OPERATION_INSERT_COLUMNS})
    SELECT id, org_id, type, status, vm_id, volume_id, deployment_id, steps::jsonb, params::jsonb, result::jsonb, error::jsonb,
           attempts, locked_by, locked_until, created_at, started_at, finished_at
      FROM decided WHERE covered ORDER BY n
    ON CONFLICT DO NOTHING
    RETURNING id
  ), held AS MATERIALIZED (
    SELECT d.org_id, d.currency, d.amount, d.id,
           row_number() OVER (PARTITION BY d.org_id ORDER BY d.currency, d.n) AS rn,
           count(*) OVER (PARTITION BY d.org_id) AS cnt,
           sum(d.amount) OVER (PARTITION BY d.org_id, d.currency ORDER BY d.n ROWS UNBOUNDED PRECEDING) AS upto
      FROM decided d JOIN accepted a ON a.id = d.id
     WHERE d.amount IS NOT NULL
  ), totals AS (
    SELECT org_id, currency, sum(amount) AS total FROM held GROUP BY org_id, currency
  ), heads AS (
    INSERT INTO wallet_heads AS h (org_id, last_seq, last_at)
    SELECT org_id, count(*), now() FROM held GROUP BY org_id ORDER BY org_id
    ON CONFLICT (org_id) DO UPDATE SET last_seq = h.last_seq + EXCLUDED.last_seq, last_at = greatest(h.last_at, EXCLUDED.last_at)
    RETURNING org_id, last_seq, last_at
  ), holds AS (
    INSERT INTO wallet_ledger (${LEDGER_POSITIONED_COLUMNS})
    SELECT x.org_id, x.currency, 'hold', x.amount, x.id, 'reserved for operation',
           ${NEW_LEDGER_PUBLIC_ID}, hd.last_seq - x.cnt + x.rn, hd.last_at, l.available - x.upto, l.reserved + x.upto
      FROM held x JOIN heads hd ON hd.org_id = x.org_id JOIN locked l ON l.org_id = x.org_id AND l.currency = x.currency
     ORDER BY x.org_id, x.rn
    RETURNING 1 AS appended
  ), balances AS (
    UPDATE wallet_balances AS b
       SET available = l.available - t.total, reserved = l.reserved + t.total, updated_at = now()
      FROM totals t JOIN locked l ON l.org_id = t.org_id AND l.currency = t.currency
     WHERE b.org_id = t.org_id AND b.currency = t.currency
    RETURNING 1 AS written
  ), audited AS (
    INSERT INTO audit_log (${AUDIT_INSERT_COLUMNS})
    SELECT e.public_id, e.org_id, e.actor_type, e.actor_id, e.action, e.target_type, e.target_id, e.ip_address, e.request_id, e.data::jsonb, e.client_request_id
      FROM unnest($20::text[], $21::text[], $22::text[], $23::text[], $24::text[], $25::text[], $26::text[], $27::text[], $28::text[], $29::text[], $30::text[])
           WITH ORDINALITY AS e(public_id, org_id, actor_type, actor_id, action, target_type, target_id, ip_address, request_id, data, client_request_id, n)
      JOIN decided d ON d.n = e.n JOIN accepted a ON a.id = d.id
     WHERE (SELECT count(*) FROM holds) >= 0 AND (SELECT count(*) FROM balances) >= 0
     ORDER BY e.org_id, e.n
    RETURNING 1 AS recorded
  )
  SELECT d.id, EXISTS (SELECT 1 FROM accepted a WHERE a.id = d.id) AS accepted, d.covered,
         coalesce(d.balance - (d.running - d.amount), 0)::text AS available, (SELECT count(*) FROM audited)::int AS audited
    FROM decided d ORDER BY d.n`;

/** Times the statement runs when an unfinished operation of the volume, found by the index, has ended before it could be named. */
const ATTEMPTS = 3;

/**
 * OperationAcceptance in one statement (one round trip, a named prepared statement): the hold
 * (the balance row locked, `available >= amount` checked and the new balance computed on its
 * latest version), the operation,
 * the hold's ledger row and the audit entry (its trigger takes the organization's audit head
 * last). Each write depends on the operation's insert, so a refusal writes nothing; the CHECKs
 * and unique indexes (one hold per operation, balances never negative) stay the last word.
 * A refusal names its reason with one more statement: the volume's unfinished operation (409
 * first), else the balance that cannot cover the hold. The workers are told once the
 * transaction commits.
 */
@Injectable()
export class TypeOrmOperationAcceptance extends OperationAcceptance {
  constructor(
    private readonly db: Db,
    private readonly signals: OperationSignals,
    private readonly operations: OperationRepository,
  ) {
    super();
  }

  async accept({ operation, hold, audit }: OperationToAccept): Promise<AcceptanceOutcome> {
    const amount = hold && hold.minor > 0n ? hold : undefined;
    const params = [...operationValues(operation), amount?.minor.toString() ?? null, amount?.currency ?? null, ...auditValues(audit)];
    for (let attempt = 1; ; attempt++) {
      const row = await this.db.one<{ accepted: boolean; available: string | null }>(ACCEPT_SQL, params, 'operations_accept');
      if (row?.accepted) {
        if (operation.snapshot().status === 'pending') await this.signals.announceWork();
        return { kind: 'accepted' };
      }
      const busy = operation.volumeId ? await this.operations.unfinishedForVolume(operation.volumeId) : undefined;
      if (busy) return { kind: 'busy', operationId: busy };
      const available = BigInt(row?.available ?? '0');
      if (amount && available < amount.minor) return { kind: 'insufficient', available: Money.ofMinor(amount.currency, available) };
      if (attempt === ATTEMPTS) throw new Error(`Operation ${operation.id} was neither accepted nor refused`);
    }
  }

  /**
   * One statement for the batch (ACCEPT_MANY_SQL); an operation covered but not inserted had its
   * volume or server busy, its unfinished operation named by one more statement each (rare: the
   * callers claim idle resources under their row locks).
   */
  async acceptMany(requests: readonly OperationToAccept[]): Promise<AcceptanceOutcome[]> {
    if (requests.length === 0) return [];
    const amounts = requests.map((r) => (r.hold && r.hold.minor > 0n ? r.hold : undefined));
    const ops = requests.map((r) => operationValues(r.operation));
    const audits = requests.map((r) => auditValues(r.audit));
    const params = [
      ...Array.from({ length: 17 }, (_, i) => ops.map((v) => v[i])),
      amounts.map((a) => a?.minor.toString() ?? null),
      amounts.map((a) => a?.currency ?? null),
      ...Array.from({ length: 11 }, (_, i) => audits.map((v) => v[i])),
    ];
    const rows = await this.db.query<{ id: string; accepted: boolean; covered: boolean; available: string }>(ACCEPT_MANY_SQL, params, 'operations_accept_many');
    const outcomes: AcceptanceOutcome[] = [];
    // What the balance had left at the first refused hold of an organization and currency (the later ones' running sums count it).
    const left = new Map<string, Money>();
    for (const [i, row] of rows.entries()) {
      const { operation } = requests[i];
      if (row.accepted) outcomes.push({ kind: 'accepted' });
      else if (!row.covered) {
        const pair = `${operation.orgId} ${amounts[i]!.currency}`;
        if (!left.has(pair)) left.set(pair, Money.ofMinor(amounts[i]!.currency, BigInt(row.available)));
        outcomes.push({ kind: 'insufficient', available: left.get(pair)! });
      }
      else outcomes.push({ kind: 'busy', operationId: (await this.busyWith(operation)) ?? 'unknown' });
    }
    if (requests.some((r, i) => rows[i].accepted && r.operation.snapshot().status === 'pending')) await this.signals.announceWork();
    return outcomes;
  }

  /** The unfinished operation that keeps `operation`'s volume or server busy (the two unique indexes' conditions). */
  private async busyWith(operation: Operation): Promise<string | undefined> {
    const o = operation.snapshot();
    if (o.volumeId) return this.operations.unfinishedForVolume(o.volumeId);
    const row = await this.db.one<{ id: string }>(
      `SELECT id FROM operations WHERE vm_id = $1 AND status IN ('pending', 'running') AND (type LIKE 'vm.%' OR type LIKE 'template.%') LIMIT 1`,
      [o.vmId],
      'operations_unfinished_id_for_server',
    );
    return row?.id;
  }
}
