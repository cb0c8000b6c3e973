import { Injectable } from '@nestjs/common';
import { Db } from '../../../shared/database/transaction';
import { AUDIT_INSERT_COLUMNS, auditValues } from '../../audit/infrastructure/typeorm-audit-trail';
import { LEDGER_POSITIONED_COLUMNS, NEW_LEDGER_PUBLIC_ID } from '../../wallet/infrastructure/typeorm-wallet-ledger';
import { AcceptanceOutcome, OperationAcceptance, OperationToAccept } from '../application/operation-acceptance.port';
import { Money } from '../../../shared/kernel/money/money';
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
}
