import { Db } from '../../../shared/database/transaction';
import { Finding, InvariantCheck } from '../application/invariant-checks.port';

/** How the provider check reaches one kind of prepaid copy (a disk's snapshot, a server's image) and names it. */
export interface ProviderCopyKind {
  /** The check's name, e.g. `provider.snapshots_match`. */
  name: string;
  description: string;
  /** The table of the copies (id, org_id, status, operation_id). */
  table: string;
  /** The copy's noun in messages: `snapshot`, `image`. */
  noun: string;
  /** The provider's name in messages: `storage provider`, `compute provider`. */
  provider: string;
  /** What the provider says when it cannot list its copies, e.g. `could not list its snapshots`. */
  cannotList: string;
  /** What a provider copy of no known copy is, e.g. `holds a snapshot of no known snapshot`. */
  holdsUnknown: string;
  /** The ids of the copies the provider holds. */
  list(): Promise<string[]>;
  /** Whether `err` is the provider being unavailable (reported as a finding, not thrown). */
  unavailable(err: unknown): err is Error;
}

/**
 * Every live copy (available or suspended, no operation in flight) exists at its provider, and no
 * provider copy is left for a deleted copy or for none. A kind of copy gives its ProviderCopyKind.
 */
export class ProviderCopiesCheck implements InvariantCheck {
  readonly name: string;
  readonly description: string;

  constructor(
    private readonly db: Db,
    private readonly of: ProviderCopyKind,
  ) {
    this.name = of.name;
    this.description = of.description;
  }

  async findViolations(): Promise<Finding[]> {
    const { noun, provider } = this.of;
    let held: string[];
    try {
      held = await this.of.list();
    } catch (err) {
      if (!this.of.unavailable(err)) throw err;
      return [{ subject: 'provider', message: `the ${provider} ${this.of.cannotList}: ${err.message}`, details: {} }];
    }
    const atProvider = new Set(held);
    const rows = await this.db.query<{ id: string; org_id: string; status: string; busy: boolean }>(
      `SELECT id, org_id, status, operation_id IS NOT NULL AS busy FROM ${this.of.table} WHERE status IN ('available', 'suspended') OR id = ANY($1::text[]) ORDER BY id`,
      [[...atProvider]],
    );
    const found: Finding[] = [];
    const known = new Set<string>();
    for (const r of rows) {
      known.add(r.id);
      if (r.busy || r.status === 'creating' || r.status === 'deleting') continue;
      const live = r.status === 'available' || r.status === 'suspended';
      if (live && !atProvider.has(r.id)) found.push({ subject: r.id, message: `${r.status} ${noun} is missing at the ${provider}`, details: { org_id: r.org_id } });
      if (!live && atProvider.has(r.id)) found.push({ subject: r.id, message: `${r.status} ${noun} still exists at the ${provider}`, details: { org_id: r.org_id } });
    }
    for (const id of atProvider) {
      if (!known.has(id)) found.push({ subject: id, message: `the ${provider} ${this.of.holdsUnknown}`, details: {} });
    }
    return found;
  }
}

/** How the charged-once check reaches one kind of prepaid copy and names it. */
export interface ChargedCopyKind {
  /** The check's name, e.g. `snapshots.charged_once`. */
  name: string;
  description: string;
  /** The table of the copies (id, org_id, status, deleted_reason). */
  table: string;
  /** The copy's noun in messages: `snapshot`, `image`. */
  noun: string;
  /** (Constants of the code, written into the SQL.) Its purchase's operation type, e.g. `snapshot.create`, and the params key naming the copy, e.g. `snapshot_id`. */
  createType: string;
  idParam: string;
}

/**
 * Every copy bought and kept (not a failed purchase) was charged exactly once: its create
 * operation succeeded with one hold and one capture (the ledger's own checks catch a second
 * capture); a copy still `creating` has its operation unfinished. A kind of copy gives its ChargedCopyKind.
 */
export class CopiesChargedOnceCheck implements InvariantCheck {
  readonly name: string;
  readonly description: string;

  constructor(
    private readonly db: Db,
    private readonly of: ChargedCopyKind,
  ) {
    this.name = of.name;
    this.description = of.description;
  }

  async findViolations(): Promise<Finding[]> {
    const rows = await this.db.query<{ id: string; org_id: string; status: string; creates: number; succeeded: number; captures: number; holds: number }>(
      `SELECT c.id, c.org_id, c.status,
              count(DISTINCT o.id)::int AS creates,
              count(DISTINCT o.id) FILTER (WHERE o.status = 'succeeded')::int AS succeeded,
              count(l.id) FILTER (WHERE l.kind = 'capture')::int AS captures,
              count(l.id) FILTER (WHERE l.kind = 'hold')::int AS holds
         FROM ${this.of.table} c
         LEFT JOIN operations o ON o.type = '${this.of.createType}' AND o.params->>'${this.of.idParam}' = c.id
         LEFT JOIN wallet_ledger l ON l.operation_id = o.id
        WHERE c.status <> 'creating' AND c.deleted_reason IS DISTINCT FROM 'purchase_failed'
        GROUP BY c.id, c.org_id, c.status
       HAVING NOT (count(DISTINCT o.id) = 1 AND count(DISTINCT o.id) FILTER (WHERE o.status = 'succeeded') = 1
                   AND count(l.id) FILTER (WHERE l.kind = 'capture') = 1 AND count(l.id) FILTER (WHERE l.kind = 'hold') = 1)
        ORDER BY c.id`,
    );
    return rows.map((r) => ({
      subject: r.id,
      message: `${r.status} ${this.of.noun} has ${r.creates} ${this.of.createType} operation(s) (${r.succeeded} succeeded), ${r.holds} hold(s) and ${r.captures} capture(s); expected 1, 1, 1, 1`,
      details: { ...r },
    }));
  }
}
