import { AutoRenewOncePerTermCheck, SuspendedVolumeDetachedCheck, TermDeadlinesCheck } from './term-checks';
import { Injectable, Optional } from '@nestjs/common';
import { Settings, loadSettings } from '../../../shared/config/settings';
import { Db } from '../../../shared/database/transaction';
import { REGION_USED_GB_MISMATCHES, SlotMismatch, regionSlotMismatches } from '../../options/infrastructure/region-capacity.sql';
import { BlockStorage } from '../../storage-provider/application/block-storage.port';
import { Finding, InvariantCheck, InvariantChecks } from '../application/invariant-checks.port';
import { ProviderDisksCheck } from './provider-disks-check';
import { ProviderSnapshotsCheck, SnapshotCountsCheck, SnapshotsChargedOnceCheck } from './snapshot-checks';
import { ImageCountsCheck, ImagesChargedOnceCheck, ProviderImagesCheck } from './image-checks';
import { ProviderReservedIpsCheck, ReservedIpsChargedOnceCheck, ReservedIpsHeldOnceCheck } from './reserved-ip-checks';
import { TemplateAppsCheck } from './template-apps-check';
import { TemplateApps } from '../../templates/application/template-apps.port';
import { ProviderInstancesCheck } from './provider-instances-check';
import { ComputeProvider } from '../../servers/application/compute-provider.port';
import { AccessCheck } from './access-checks';
import { OrganizationsPerUserCheck } from './organizations-per-user-check';
import { RegionVcpusUsedCheck } from './region-vcpus-check';
import { ResizeReservationsCheck } from './resize-reservations-check';
import { DeletingServerHasOperationCheck, NoDiskOnDeletedServerCheck, SucceededServerDeletionCheck } from './server-deletion-checks';
import { OneUnfinishedServerOperationCheck, ServerPurchasesCapturedOnceCheck } from './server-operations-check';
import { WebhookDeliveriesOnScheduleCheck } from './webhook-deliveries-check';
import { AdjustmentsInLedgerOnceCheck, RefundedWithinAmountCheck, RefundsDebitedOnceCheck } from './adjustments-and-refunds-check';
import { TopUpsCreditedOnceCheck } from './top-ups-credited-once-check';
import { WalletLedgerChainCheck } from './wallet-ledger-chain-check';
import { NetworkAttachmentsCheck, ProviderAddressesCheck, ServerIpv6Check } from './network-checks';

/**
 * An invariant checked by one SELECT that returns the rows breaking it. Every amount is NUMERIC
 * in minor units, compared exactly in SQL and reported as text.
 */
abstract class SqlCheck implements InvariantCheck {
  abstract readonly name: string;
  abstract readonly description: string;
  constructor(protected readonly db: Db) {}
  abstract findViolations(): Promise<Finding[]>;
}

/**
 * Per organization and currency, from the ledger: credits (net of adjustments and refunds), captures, and the holds not yet
 * settled (no capture or release for their operation). A balance row without ledger rows, or
 * ledger rows without a balance row, count as zero on the missing side.
 */
const WALLET_SUMS = `
  WITH settled AS (
    SELECT DISTINCT operation_id FROM wallet_ledger WHERE kind IN ('capture', 'release')
  ), sums AS (
    SELECT l.org_id, l.currency,
           -- Credits net of adjustments (either way) and refunds: every movement of available outside holds.
           coalesce(sum(CASE WHEN l.kind IN ('credit', 'adjustment_credit') THEN l.amount WHEN l.kind IN ('adjustment_debit', 'refund') THEN -l.amount END), 0) AS credits,
           coalesce(sum(l.amount) FILTER (WHERE l.kind = 'capture'), 0) AS captures,
           coalesce(sum(l.amount) FILTER (WHERE l.kind = 'hold' AND s.operation_id IS NULL), 0) AS outstanding
      FROM wallet_ledger l LEFT JOIN settled s ON s.operation_id = l.operation_id
     GROUP BY l.org_id, l.currency
  )
  SELECT coalesce(b.org_id, x.org_id) AS org_id, coalesce(b.currency, x.currency) AS currency,
         coalesce(b.available, 0) AS available, coalesce(b.reserved, 0) AS reserved,
         coalesce(x.credits, 0) AS credits, coalesce(x.captures, 0) AS captures, coalesce(x.outstanding, 0) AS outstanding
    FROM wallet_balances b FULL JOIN sums x ON x.org_id = b.org_id AND x.currency = b.currency`;

interface WalletRow {
  org_id: string;
  currency: string;
  available: string;
  reserved: string;
  credits: string;
  captures: string;
  outstanding: string;
}

export class WalletAvailableCheck extends SqlCheck {
  readonly name = 'wallet.available_matches_ledger';
  readonly description = 'For every organization and currency, credits - captures - outstanding holds = available';

  async findViolations(): Promise<Finding[]> {
    const rows = await this.db.query<WalletRow>(
      `SELECT org_id, currency, available::text, reserved::text, credits::text, captures::text, outstanding::text
         FROM (${WALLET_SUMS}) w
        WHERE credits - captures - outstanding <> available
        ORDER BY org_id, currency`,
    );
    return rows.map((r) => ({
      subject: `${r.org_id}/${r.currency}`,
      message: `available is ${r.available} but credits ${r.credits} - captures ${r.captures} - outstanding holds ${r.outstanding} = ${
        BigInt(r.credits) - BigInt(r.captures) - BigInt(r.outstanding)
      } (minor units)`,
      details: { org_id: r.org_id, currency: r.currency, available: r.available, credits: r.credits, captures: r.captures, outstanding_holds: r.outstanding },
    }));
  }
}

export class WalletReservedCheck extends SqlCheck {
  readonly name = 'wallet.reserved_matches_holds';
  readonly description = 'For every organization and currency, outstanding holds = reserved';

  async findViolations(): Promise<Finding[]> {
    const rows = await this.db.query<WalletRow>(
      `SELECT org_id, currency, reserved::text, outstanding::text FROM (${WALLET_SUMS}) w
        WHERE outstanding <> reserved ORDER BY org_id, currency`,
    );
    return rows.map((r) => ({
      subject: `${r.org_id}/${r.currency}`,
      message: `reserved is ${r.reserved} but the outstanding holds add up to ${r.outstanding} (minor units)`,
      details: { org_id: r.org_id, currency: r.currency, reserved: r.reserved, outstanding_holds: r.outstanding },
    }));
  }
}

/**
 * Each operation with its ledger rows counted by kind. An operation charges when it holds
 * money (a hold row) or its parameters carry a non-zero `amount` (a renewal's price: a
 * charging operation whose hold went missing is caught too).
 */
const OPERATION_LEDGER = `
  SELECT o.id, o.org_id, o.type, o.status,
         count(l.id) FILTER (WHERE l.kind = 'hold')::int AS holds,
         count(l.id) FILTER (WHERE l.kind = 'capture')::int AS captures,
         count(l.id) FILTER (WHERE l.kind = 'release')::int AS releases,
         (count(l.id) FILTER (WHERE l.kind = 'hold') > 0
           OR coalesce(o.params->>'amount', '') ~ '[1-9]') AS charges
    FROM operations o LEFT JOIN wallet_ledger l ON l.operation_id = o.id
   GROUP BY o.id`;

interface OperationLedgerRow {
  id: string;
  org_id: string;
  type: string;
  status: string;
  holds: number;
  captures: number;
  releases: number;
}

const ledgerDetails = (r: OperationLedgerRow): Finding['details'] => ({
  org_id: r.org_id,
  type: r.type,
  status: r.status,
  holds: r.holds,
  captures: r.captures,
  releases: r.releases,
});

/** An invariant on each operation's ledger rows: `where` selects the operations breaking it. */
class OperationLedgerCheck extends SqlCheck {
  constructor(
    db: Db,
    readonly name: string,
    readonly description: string,
    private readonly where: string,
    private readonly message: (r: OperationLedgerRow) => string,
  ) {
    super(db);
  }

  async findViolations(): Promise<Finding[]> {
    const rows = await this.db.query<OperationLedgerRow>(`SELECT * FROM (${OPERATION_LEDGER}) x WHERE ${this.where} ORDER BY id`);
    return rows.map((r) => ({ subject: r.id, message: this.message(r), details: ledgerDetails(r) }));
  }
}

export const succeededCapturedOnce = (db: Db): InvariantCheck =>
  new OperationLedgerCheck(
    db,
    'operations.succeeded_captured_once',
    'Every succeeded operation that charges has exactly one hold and one capture, and no release',
    `status = 'succeeded' AND charges AND NOT (holds = 1 AND captures = 1 AND releases = 0)`,
    (r) => `succeeded ${r.type} operation has ${r.holds} hold(s), ${r.captures} capture(s) and ${r.releases} release(s); expected 1, 1, 0`,
  );

export const failedReleasedOnce = (db: Db): InvariantCheck =>
  new OperationLedgerCheck(
    db,
    'operations.failed_released_once',
    'Every failed operation that charges has exactly one hold and one release, and no capture',
    `status = 'failed' AND charges AND NOT (holds = 1 AND releases = 1 AND captures = 0)`,
    (r) => `failed ${r.type} operation has ${r.holds} hold(s), ${r.releases} release(s) and ${r.captures} capture(s); expected 1, 1, 0`,
  );

export const unfinishedNotSettled = (db: Db): InvariantCheck =>
  new OperationLedgerCheck(
    db,
    'operations.unfinished_not_settled',
    'No pending or running operation has its hold captured or released, or more than one hold',
    `status IN ('pending', 'running') AND (captures > 0 OR releases > 0 OR holds > 1)`,
    (r) => `${r.status} ${r.type} operation has ${r.holds} hold(s), ${r.captures} capture(s) and ${r.releases} release(s) before it ended`,
  );

export class UnfinishedLeasedCheck extends SqlCheck {
  readonly name = 'operations.unfinished_leased';
  readonly description = 'Every unfinished operation is pending, or running under a live worker lease';

  async findViolations(): Promise<Finding[]> {
    const rows = await this.db.query<{ id: string; org_id: string; type: string; locked_by: string | null; locked_until: string | null }>(
      `SELECT id, org_id, type, locked_by,
              to_char(locked_until AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS locked_until
         FROM operations
        WHERE status = 'running' AND (locked_until IS NULL OR locked_until < now())
        ORDER BY id`,
    );
    return rows.map((r) => ({
      subject: r.id,
      message:
        r.locked_until === null
          ? `running ${r.type} operation has no worker lease`
          : `running ${r.type} operation's lease ended at ${r.locked_until} (worker ${r.locked_by ?? 'unknown'}) and no worker took it over`,
      details: { org_id: r.org_id, type: r.type, locked_by: r.locked_by, locked_until: r.locked_until },
    }));
  }
}

/**
 * A disk may be attached while the server holds fewer disks than its offer's per_server_limit,
 * so at any time a server holds at most the largest limit among the types of its disks.
 */
export class ServerDiskLimitCheck extends SqlCheck {
  readonly name = 'servers.within_per_server_limit';
  readonly description = "No server holds more data disks (volumes not deleted attached to it) than its disks' per_server_limit";

  async findViolations(): Promise<Finding[]> {
    const rows = await this.db.query<{ id: string; org_id: string; disks: number; per_server_limit: number }>(
      `SELECT s.id, s.org_id, count(v.id)::int AS disks, coalesce(max(o.per_server_limit), 0)::int AS per_server_limit
         FROM servers s
         JOIN volumes v ON v.server_id = s.id AND v.deleted_at IS NULL
         LEFT JOIN volume_offers o ON o.region_id = v.region_id AND o.type = v.type
        GROUP BY s.id, s.org_id
       HAVING count(v.id) > coalesce(max(o.per_server_limit), 0)
        ORDER BY s.id`,
    );
    return rows.map((r) => ({
      subject: r.id,
      message: `server holds ${r.disks} data disks, over its per_server_limit of ${r.per_server_limit}`,
      details: { org_id: r.org_id, disks: r.disks, per_server_limit: r.per_server_limit },
    }));
  }
}

/** lifecycle.md "Region capacity is a counter": each region's used_gb equals the sizes of its live volumes. */
export class RegionUsedGbCheck extends SqlCheck {
  readonly name = 'regions.used_gb_matches_volumes';
  readonly description = "Every region's used_gb counter equals the sum of size_gb (and gigabytes reserved by a resize in flight) of its volumes not deleted";

  async findViolations(): Promise<Finding[]> {
    const rows = await this.db.query<{ region_id: string; used_gb: string; live_gb: string }>(REGION_USED_GB_MISMATCHES);
    const slots = await this.db.query<SlotMismatch>(regionSlotMismatches('volumes', 'used_gb', 'size_gb + resize_reserved_gb'));
    return [
      ...rows.map((r) => ({
        subject: r.region_id,
        message: `used_gb is ${r.used_gb} but its live volumes hold ${r.live_gb} GB`,
        details: { used_gb: r.used_gb, live_gb: r.live_gb },
      })),
      ...slots.map((r) => ({
        subject: r.region_id,
        message: `slot ${r.slot} counts ${r.counted} GB but the live volumes counted in it hold ${r.held} GB`,
        details: { slot: r.slot, used_gb: r.counted, live_gb: r.held },
      })),
    ];
  }
}

/** Every check, in the order reported. Add a check: a class above (or in a file of its own) and a line here. */
@Injectable()
export class TypeOrmInvariantChecks extends InvariantChecks {
  private readonly checks: readonly InvariantCheck[];

  constructor(db: Db, storage: BlockStorage, compute: ComputeProvider, settings: Settings = loadSettings(), @Optional() apps?: TemplateApps) {
    super();
    this.checks = [
      new WalletAvailableCheck(db),
      new WalletReservedCheck(db),
      succeededCapturedOnce(db),
      failedReleasedOnce(db),
      unfinishedNotSettled(db),
      new UnfinishedLeasedCheck(db),
      new ServerDiskLimitCheck(db),
      new RegionUsedGbCheck(db),
      new ProviderDisksCheck(db, storage),
      new AccessCheck(db),
      new OrganizationsPerUserCheck(db),
      new RegionVcpusUsedCheck(db),
      new NoDiskOnDeletedServerCheck(db),
      new SucceededServerDeletionCheck(db),
      new DeletingServerHasOperationCheck(db),
      new OneUnfinishedServerOperationCheck(db),
      new ServerPurchasesCapturedOnceCheck(db),
      new WebhookDeliveriesOnScheduleCheck(db, settings),
      new WalletLedgerChainCheck(db),
      new TopUpsCreditedOnceCheck(db),
      new AdjustmentsInLedgerOnceCheck(db),
      new RefundsDebitedOnceCheck(db),
      new RefundedWithinAmountCheck(db),
      new ProviderInstancesCheck(db, compute),
      new TermDeadlinesCheck(db, settings),
      new SuspendedVolumeDetachedCheck(db),
      new AutoRenewOncePerTermCheck(db),
      new SnapshotsChargedOnceCheck(db),
      new SnapshotCountsCheck(db),
      new ProviderSnapshotsCheck(db, storage),
      new ImagesChargedOnceCheck(db),
      new ImageCountsCheck(db),
      new ProviderImagesCheck(db, compute),
      new ReservedIpsHeldOnceCheck(db),
      new ReservedIpsChargedOnceCheck(db),
      new ProviderReservedIpsCheck(db, compute),
      new ResizeReservationsCheck(db),
      new ServerIpv6Check(db),
      new NetworkAttachmentsCheck(db),
      new ProviderAddressesCheck(db, compute),
      ...(apps ? [new TemplateAppsCheck(db, apps)] : []),
    ];
  }

  all(): readonly InvariantCheck[] {
    return this.checks;
  }
}
