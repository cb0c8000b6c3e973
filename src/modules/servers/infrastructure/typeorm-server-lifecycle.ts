import { Injectable } from '@nestjs/common';
import { CHECK_VIOLATION, Db, UNIQUE_VIOLATION, constraintOf, sqlState } from '../../../shared/database/transaction';
import { DomainError } from '../../../shared/kernel/errors/domain-error';
import { outOfVcpus } from '../domain/server-actions';
import { IPV6_SUBNETS_CHECK, ipv6Exhausted } from '../../options/domain/region-ipv6';
import { Money, PricePair } from '../../../shared/kernel/money/money';
import { OperationSignals } from '../../operations/application/operation-signals.port';
import { Operation } from '../../operations/domain/operation';
import { OPERATION_INSERT_COLUMNS, operationValues } from '../../operations/infrastructure/typeorm-operations.repository';
import { TermMonths } from '../../prepaid/domain/term';
import { NewServer, ServerLifecycle } from '../application/server-lifecycle.port';
import { ServerReads } from '../application/servers.port';
import { SERVER_READ_COLUMNS, ServerRow, toServer } from './typeorm-server-reads';
import { Server, ServerStatus, nameTaken } from '../domain/server';

@Injectable()
export class TypeOrmServerLifecycle extends ServerLifecycle {
  constructor(
    private readonly db: Db,
    private readonly reads: ServerReads,
    private readonly signals: OperationSignals,
  ) {
    super();
  }

  async insert(s: NewServer): Promise<Server> {
    try {
      // Read back by the insert's own statement (RETURNING, as findInOrg reads it: a new server has no network, disk or reserved address yet).
      const row = await this.db.one<ServerRow>(
        `WITH s AS (INSERT INTO servers (id, org_id, name, region_id, zone_id, status, plan_id, vcpus, memory_gb, disk_gb, image_id, ipv4, term_months,
                              billing_currency, billing_amount, price_usd_minor, price_idr_minor, expires_at, labels, delete_protection, created_at, ssh_key_ids,
                              auto_renew_enabled, auto_renew_term_months, auto_renew_lead_s)
         VALUES ($1, $2, $3, $4, $5, 'creating', $6, $7, $8, $9, $10, NULL, $11, $12, $13, $14, $15, $16, $17::jsonb, $18, $19, $20::text[], $21, $22, $23)
         RETURNING *)
         SELECT ${SERVER_READ_COLUMNS} FROM s`,
        [
          s.id, s.orgId, s.name, s.regionId, s.zoneId, s.planId, s.vcpus, s.memoryGb, s.diskGb, s.image, s.termMonths, s.billing.currency,
          s.billing.minor.toString(), s.price.USD.minor.toString(), s.price.IDR.minor.toString(), s.expiresAt, JSON.stringify(s.labels),
          s.deleteProtection, s.createdAt, s.sshKeyIds, s.autoRenew?.enabled ?? false, s.autoRenew?.termMonths ?? null, s.autoRenew?.leadS ?? 259_200,
        ],
        'servers_purchase_insert',
      );
      return toServer(row!);
    } catch (err) {
      if (sqlState(err) === UNIQUE_VIOLATION && constraintOf(err) === 'servers_org_name_live_key') {
        const holder = await this.db.one<{ id: string }>('SELECT id FROM servers WHERE org_id = $1 AND name = $2 AND deleted_at IS NULL', [s.orgId, s.name]).catch(() => undefined);
        throw nameTaken(s.name, holder?.id);
      }
      if (sqlState(err) === CHECK_VIOLATION && constraintOf(err) === 'regions_vcpus_within_capacity') {
        throw outOfVcpus(s.regionId, s.vcpus, s.planId);
      }
      // The region's /48 has handed out its last /64 (the IPv6 trigger's counter at its CHECK).
      if (sqlState(err) === CHECK_VIOLATION && constraintOf(err) === IPV6_SUBNETS_CHECK) throw ipv6Exhausted(s.regionId);
      throw err;
    }
  }

  async lockOrgForPurchase(orgId: string, name: string): Promise<{ serverLimit: number | null; live: number; holder: string | undefined }> {
    const org = await this.db.one<{ server_limit: number | null }>(
      'SELECT server_limit FROM organizations WHERE id = $1 FOR NO KEY UPDATE',
      [orgId],
      'organizations_lock_for_purchase',
    );
    // A statement of its own, after the lock: its snapshot sees every server committed by the purchases that held the row before.
    const row = await this.db.one<{ n: number; holder: string | null }>(
      `SELECT (SELECT count(*)::int FROM servers WHERE org_id = $1 AND deleted_at IS NULL) AS n,
              (SELECT id FROM servers WHERE org_id = $1 AND name = $2 AND deleted_at IS NULL LIMIT 1) AS holder`,
      [orgId, name],
      'servers_count_live_and_holder',
    );
    return { serverLimit: org?.server_limit ?? null, live: row?.n ?? 0, holder: row?.holder ?? undefined };
  }

  async lock(id: string): Promise<Server | undefined> {
    const row = await this.db.one<{ org_id: string }>('SELECT org_id FROM servers WHERE id = $1 FOR UPDATE', [id], 'servers_lock_by_id');
    return row && this.reads.findInOrg(row.org_id, id);
  }

  async acceptOperation(operation: Operation): Promise<{ accepted: true } | { accepted: false; busyWith: string | undefined }> {
    const row = await this.db.one<{ id: string }>(
      `INSERT INTO operations (${OPERATION_INSERT_COLUMNS})
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
       ON CONFLICT (vm_id) WHERE status IN ('pending', 'running') AND vm_id IS NOT NULL AND (type LIKE 'vm.%' OR type LIKE 'template.%') DO NOTHING
       RETURNING id`,
      operationValues(operation),
      'operations_accept_server_op',
    );
    if (!row) return { accepted: false, busyWith: await this.unfinishedOperation(operation.snapshot().vmId!) };
    if (operation.status === 'pending') await this.signals.announceWork();
    return { accepted: true };
  }

  async unfinishedOperation(serverId: string): Promise<string | undefined> {
    const row = await this.db.one<{ id: string }>(
      `SELECT id FROM operations
        WHERE vm_id = $1 AND status IN ('pending', 'running') AND (type LIKE 'vm.%' OR type LIKE 'template.%') LIMIT 1`,
      [serverId],
      'operations_unfinished_server_op',
    );
    return row?.id;
  }

  async setStatus(id: string, status: ServerStatus): Promise<void> {
    await this.db.query('UPDATE servers SET status = $2 WHERE id = $1 AND deleted_at IS NULL', [id, status]);
  }

  async markReady(id: string, ipv4: string, expiresAt: Date): Promise<void> {
    await this.db.query(`UPDATE servers SET status = 'running', ipv4 = $2, expires_at = $3 WHERE id = $1 AND deleted_at IS NULL`, [id, ipv4, expiresAt]);
  }

  async renew(id: string, termMonths: TermMonths, billing: Money, expiresAt: Date): Promise<void> {
    await this.db.query('UPDATE servers SET term_months = $2, billing_currency = $3, billing_amount = $4, expires_at = $5 WHERE id = $1', [
      id, termMonths, billing.currency, billing.minor.toString(), expiresAt,
    ]);
  }

  async markDeleted(id: string, at: Date): Promise<void> {
    // The trigger servers_deleted_sync sets status deleted and clears ipv4; regions_count_server gives the vCPUs back.
    await this.db.query('UPDATE servers SET deleted_at = $2 WHERE id = $1 AND deleted_at IS NULL', [id, at]);
  }

  async reserveVcpus(id: string, regionId: string, vcpus: number): Promise<void> {
    try {
      await this.db.query('UPDATE servers SET resize_reserved_vcpus = $2 WHERE id = $1 AND deleted_at IS NULL', [id, vcpus]);
    } catch (err) {
      if (sqlState(err) === CHECK_VIOLATION && constraintOf(err) === 'regions_vcpus_within_capacity') {
        throw new DomainError('out_of_stock', `Region ${regionId} has fewer than ${vcpus} free vCPUs for this plan change; nothing was reserved`);
      }
      throw err;
    }
  }

  async changePlan(id: string, p: { planId: string; vcpus: number; memoryGb: number; diskGb: number; price: PricePair }): Promise<void> {
    await this.db.query(
      `UPDATE servers SET plan_id = $2, vcpus = $3, memory_gb = $4, disk_gb = $5, price_usd_minor = $6, price_idr_minor = $7, resize_reserved_vcpus = 0
        WHERE id = $1`,
      [id, p.planId, p.vcpus, p.memoryGb, p.diskGb, p.price.USD.minor.toString(), p.price.IDR.minor.toString()],
    );
  }

  async releaseVcpus(id: string): Promise<void> {
    await this.db.query('UPDATE servers SET resize_reserved_vcpus = 0 WHERE id = $1 AND resize_reserved_vcpus <> 0', [id]);
  }

  async rebuilt(id: string, image: string, sshKeyIds: string[]): Promise<void> {
    await this.db.query('UPDATE servers SET image_id = $2, ssh_key_ids = $3::text[] WHERE id = $1', [id, image, sshKeyIds]);
  }

  async forgetUserData(operationId: string): Promise<void> {
    await this.db.query(`UPDATE operations SET params = params - 'user_data' WHERE id = $1 AND params ? 'user_data'`, [operationId]);
  }
}
