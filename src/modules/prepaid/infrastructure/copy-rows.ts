import { goneAmong } from '../../../shared/database/gone-among';
import { Db } from '../../../shared/database/transaction';
import { Currency, Money, PricePair, pricePairOfMinor } from '../../../shared/kernel/money/money';
import { Page, PageCursor, toPage } from '../../../shared/kernel/pagination/cursor';
import { CopyChanges } from '../application/copy.use-cases';
import { Labels } from '../domain/labels';
import { DeletedReason, PrepaidTerm, RenewedTerms, TermMonths } from '../domain/term';

/** The table of one kind of prepaid copy (a disk's snapshot, a server's image), as its SQL names it. */
export interface CopyTable {
  /** The table, e.g. `snapshots`. */
  table: string;
  /** Its alias in `select`, e.g. `s`. */
  alias: string;
  /** `SELECT <its columns> FROM <table> <alias>`. */
  select: string;
  /** The prefix of its prepared statements' names, e.g. `snapshots` (`snapshots_set_operation`). */
  statements: string;
  /** The key of its operations' params naming the copy, e.g. `snapshot_id`. */
  idParam: string;
}

/** A copy whose deadline has come, claimed (row locked FOR UPDATE SKIP LOCKED) by a term sweep. */
export interface ClaimedCopy {
  id: string;
  orgId: string;
  expiresAt: Date;
  termMonths: TermMonths;
  autoRenew: { enabled: boolean; termMonths: TermMonths | null };
}

/** The columns every prepaid row holds beside its own kind's, as a SELECT reads them (amounts as text). */
export interface CopyTermRow {
  term_months: TermMonths;
  billing_currency: Currency;
  billing_amount: string;
  price_usd_minor: string;
  price_idr_minor: string;
  expires_at: Date;
  auto_renew_enabled: boolean;
  auto_renew_term_months: TermMonths | null;
  labels: Labels;
  operation_id: string | null;
  created_at: Date;
  suspended_at: Date | null;
  release_at: Date | null;
}

/** A CopyTermRow's members from term_months to created_at, mapped (each kind's mapping adds the rest in its own order). */
export function copyTermOf(r: CopyTermRow): Omit<PrepaidTerm, 'suspendedAt' | 'releaseAt'> {
  return {
    termMonths: r.term_months,
    billing: Money.ofMinor(r.billing_currency, BigInt(r.billing_amount)),
    price: pricePairOfMinor(r.price_usd_minor, r.price_idr_minor),
    expiresAt: r.expires_at,
    autoRenew: { enabled: r.auto_renew_enabled, termMonths: r.auto_renew_term_months },
    labels: r.labels,
    operationId: r.operation_id,
    createdAt: r.created_at,
  };
}

/**
 * The values of a prepaid row's INSERT for its columns term_months, billing_currency,
 * billing_amount, price_usd_minor, price_idr_minor, expires_at, auto_renew_enabled,
 * auto_renew_term_months, labels, operation_id, created_at (in that order).
 */
export function copyTermValues(c: Omit<PrepaidTerm, 'suspendedAt' | 'releaseAt'>): unknown[] {
  return [
    c.termMonths, c.billing.currency, c.billing.minor.toString(), c.price.USD.minor.toString(), c.price.IDR.minor.toString(), c.expiresAt,
    c.autoRenew.enabled, c.autoRenew.termMonths, JSON.stringify(c.labels), c.operationId, c.createdAt,
  ];
}

/**
 * The reads a prepaid row's repository shares whatever the kind (snapshots, images, reserved
 * addresses): one row by id (in an organization or not, locked or not) and an organization's page.
 * A kind's repository extends it (through CopyRows when it has the copies' status transitions).
 */
export class CopyReads<R, T> {
  constructor(
    protected readonly db: Db,
    private readonly t: Pick<CopyTable, 'alias' | 'select' | 'statements'>,
    private readonly to: (row: R) => T,
  ) {}

  async findInOrg(orgId: string, id: string): Promise<T | undefined> {
    const a = this.t.alias;
    const row = await this.db.one<R>(`${this.t.select} WHERE ${a}.org_id = $1 AND ${a}.id = $2`, [orgId, id], `${this.t.statements}_find_in_org`);
    return row && this.to(row);
  }

  async lockInOrg(orgId: string, id: string): Promise<T | undefined> {
    const a = this.t.alias;
    const row = await this.db.one<R>(`${this.t.select} WHERE ${a}.org_id = $1 AND ${a}.id = $2 FOR UPDATE`, [orgId, id], `${this.t.statements}_lock_in_org`);
    return row && this.to(row);
  }

  async lock(id: string): Promise<T | undefined> {
    const row = await this.db.one<R>(`${this.t.select} WHERE ${this.t.alias}.id = $1 FOR UPDATE`, [id], `${this.t.statements}_lock`);
    return row && this.to(row);
  }

  /**
   * An organization's page, newest first (created_at DESC, id DESC): `filter` adds the kind's
   * conditions, after the organization's and before the cursor's, naming its values with `param`.
   */
  protected async listPage(
    orgId: string,
    query: { limit: number; after?: PageCursor },
    filter: (where: string[], param: (value: unknown) => string) => void,
  ): Promise<Page<T>> {
    const a = this.t.alias;
    const params: unknown[] = [orgId, query.limit + 1];
    const where = [`${a}.org_id = $1`];
    const param = (value: unknown): string => `$${params.push(value)}`;
    filter(where, param);
    if (query.after) where.push(`(${a}.created_at, ${a}.id) < (${param(query.after.createdAt)}::timestamptz, ${param(query.after.id)})`);
    const sql = `SELECT l.*, to_char(l.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at_text
         FROM (${this.t.select} WHERE ${where.join(' AND ')} ORDER BY ${a}.created_at DESC, ${a}.id DESC LIMIT $2) l
        ORDER BY l.created_at DESC, l.id DESC`;
    const rows = await this.db.query<R & { created_at_text: string; id: string }>(sql, params, this.db.statementName(`${this.t.statements}_list`, sql));
    return toPage(rows, query.limit, (r) => ({ createdAt: r.created_at_text, id: r.id }), this.to);
  }
}

/**
 * The writes and claims a prepaid copy's rows share whatever the kind (its update, operation,
 * status transitions, renewal, region price and the term sweep's claims), beside CopyReads' reads:
 * one SQL text per table. A kind's repository extends it, giving its CopyTable and its row's mapping.
 */
export class CopyRows<R, T> extends CopyReads<R, T> {
  constructor(
    db: Db,
    private readonly copy: CopyTable,
    to: (row: R) => T,
  ) {
    super(db, copy, to);
  }

  update(id: string, changes: CopyChanges): Promise<void> {
    return updateCopy(this.db, this.copy.table, id, changes);
  }

  /** Of these ids (copies the provider holds), those with no live row and no unfinished operation naming them (the orphan sweeps). */
  goneAmong(ids: readonly string[]): Promise<string[]> {
    return goneAmong(this.db, this.copy.table, `o.params->>'${this.copy.idParam}' = x.id`, ids);
  }

  async setOperation(id: string, operationId: string | null): Promise<void> {
    await this.db.query(`UPDATE ${this.copy.table} SET operation_id = $2 WHERE id = $1`, [id, operationId], `${this.copy.statements}_set_operation`);
  }

  async markAvailable(id: string, expiresAt: Date): Promise<void> {
    await this.db.query(
      `UPDATE ${this.copy.table} SET status = 'available', expires_at = $2, operation_id = NULL WHERE id = $1 AND status = 'creating'`,
      [id, expiresAt],
      `${this.copy.statements}_available`,
    );
  }

  async markDeleting(id: string, operationId: string, reason: DeletedReason): Promise<void> {
    await this.db.query(
      `UPDATE ${this.copy.table} SET status = 'deleting', operation_id = $2, deleted_reason = $3 WHERE id = $1`,
      [id, operationId, reason],
      `${this.copy.statements}_deleting`,
    );
  }

  async markDeleted(id: string, at: Date, reason: DeletedReason): Promise<void> {
    await this.db.query(
      `UPDATE ${this.copy.table} SET status = 'deleted', deleted_at = $2, deleted_reason = COALESCE(deleted_reason, $3), operation_id = NULL,
              suspended_at = NULL, release_at = NULL
        WHERE id = $1 AND status <> 'deleted'`,
      [id, at, reason],
      `${this.copy.statements}_deleted`,
    );
  }

  async markSuspended(id: string, at: Date, releaseAt: Date): Promise<void> {
    await this.db.query(
      `UPDATE ${this.copy.table} SET status = 'suspended', suspended_at = $2, release_at = $3 WHERE id = $1 AND status = 'available'`,
      [id, at, releaseAt],
      `${this.copy.statements}_suspended`,
    );
  }

  saveRenewal(id: string, terms: RenewedTerms): Promise<void> {
    return saveCopyRenewal(this.db, this.copy.table, id, terms, `${this.copy.statements}_renewal`);
  }

  /** The region's snapshot price (images are sold at it too): undefined for no region, null when it sells none. */
  regionPrice(regionId: string): Promise<PricePair | null | undefined> {
    return regionPricePair(this.db, 'snapshot', regionId, `${this.copy.statements}_region_price`);
  }

  claimExpired(now: Date, limit: number): Promise<ClaimedCopy[]> {
    const a = this.copy.alias;
    return claimCopies(
      this.db,
      `${this.copy.select} WHERE ${a}.status = 'available' AND ${a}.expires_at <= $1 AND ${a}.operation_id IS NULL ORDER BY ${a}.expires_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [now, limit],
      `${this.copy.statements}_claim_expired`,
    );
  }

  claimReleasable(now: Date, limit: number): Promise<ClaimedCopy[]> {
    const a = this.copy.alias;
    return claimCopies(
      this.db,
      `${this.copy.select} WHERE ${a}.status = 'suspended' AND ${a}.release_at <= $1 AND ${a}.operation_id IS NULL ORDER BY ${a}.release_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [now, limit],
      `${this.copy.statements}_claim_releasable`,
    );
  }
}

/** Sets a prepaid row's changed name, labels and automatic renewal (nothing when nothing changed). */
export async function updateCopy(db: Db, table: string, id: string, changes: CopyChanges): Promise<void> {
  const sets: string[] = [];
  const params: unknown[] = [id];
  const set = (column: string, value: unknown): void => {
    sets.push(`${column} = $${params.push(value)}`);
  };
  if (changes.name !== undefined) set('name', changes.name);
  if (changes.labels !== undefined) set('labels', JSON.stringify(changes.labels));
  if (changes.autoRenew !== undefined) {
    set('auto_renew_enabled', changes.autoRenew.enabled);
    set('auto_renew_term_months', changes.autoRenew.termMonths);
  }
  if (sets.length === 0) return;
  await db.query(`UPDATE ${table} SET ${sets.join(', ')} WHERE id = $1`, params);
}

/** A prepaid row's renewed terms: its operation done, a suspended one available again. */
export async function saveCopyRenewal(db: Db, table: string, id: string, terms: RenewedTerms, statement: string): Promise<void> {
  await db.query(
    `UPDATE ${table} SET term_months = $2, billing_currency = $3, billing_amount = $4, expires_at = $5, operation_id = NULL,
              status = CASE WHEN status = 'suspended' THEN 'available' ELSE status END,
              suspended_at = NULL, release_at = NULL
        WHERE id = $1`,
    [id, terms.termMonths, terms.billing.currency, terms.billing.minor.toString(), terms.expiresAt],
    statement,
  );
}

/** The region's price pair of columns `<prefix>_price_usd_minor` and `_idr_minor`: undefined for no region, null when it sells none. */
export async function regionPricePair(db: Db, prefix: string, regionId: string, statement: string): Promise<PricePair | null | undefined> {
  const row = await db.one<{ usd: string | null; idr: string | null }>(
    `SELECT ${prefix}_price_usd_minor::text AS usd, ${prefix}_price_idr_minor::text AS idr FROM regions WHERE id = $1`,
    [regionId],
    statement,
  );
  if (!row) return undefined;
  return row.usd === null || row.idr === null ? null : pricePairOfMinor(row.usd, row.idr);
}

/** The rows a term sweep's claim (`sql`, selecting FOR UPDATE SKIP LOCKED) returns, as ClaimedCopy. */
export async function claimCopies(db: Db, sql: string, params: unknown[], statement: string): Promise<ClaimedCopy[]> {
  const rows = await db.query<{
    id: string; org_id: string; expires_at: Date; term_months: TermMonths; auto_renew_enabled: boolean; auto_renew_term_months: TermMonths | null;
  }>(sql, params, statement);
  return rows.map((r) => ({
    id: r.id, orgId: r.org_id, expiresAt: r.expires_at, termMonths: r.term_months,
    autoRenew: { enabled: r.auto_renew_enabled, termMonths: r.auto_renew_term_months },
  }));
}

