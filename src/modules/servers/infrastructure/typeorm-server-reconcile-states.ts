import { Injectable } from '@nestjs/common';
import { Db } from '../../../shared/database/transaction';
import { ServerReconcileStates, ServerStateChange } from '../application/server-reconcile.port';
import { Server } from '../domain/server';
import { TypeOrmServerReads } from './typeorm-server-reads';

/** An unfinished operation that holds the server (the one the unique index operations_one_unfinished_server_op counts). */
const UNFINISHED_SERVER_OPERATION = `SELECT 1 FROM operations o
  WHERE o.vm_id = s.id AND o.status IN ('pending', 'running') AND (o.type LIKE 'vm.%' OR o.type LIKE 'template.%')`;

@Injectable()
export class TypeOrmServerReconcileStates extends ServerReconcileStates {
  private readonly reads: TypeOrmServerReads;

  constructor(private readonly db: Db) {
    super();
    this.reads = new TypeOrmServerReads(db);
  }

  async settledAfter(after: string, limit: number): Promise<{ id: string; orgId: string }[]> {
    const rows = await this.db.query<{ id: string; org_id: string }>(
      `SELECT s.id, s.org_id FROM servers s
        WHERE s.deleted_at IS NULL AND s.id > $1 AND NOT EXISTS (${UNFINISHED_SERVER_OPERATION})
        ORDER BY s.id LIMIT $2`,
      [after, limit],
    );
    return rows.map((r) => ({ id: r.id, orgId: r.org_id }));
  }

  find(orgId: string, id: string): Promise<Server | undefined> {
    return this.reads.findInOrg(orgId, id);
  }

  async lock(orgId: string, id: string): Promise<Server | undefined> {
    const row = await this.db.one('SELECT id FROM servers WHERE org_id = $1 AND id = $2 FOR UPDATE', [orgId, id], 'servers_lock_for_reconcile');
    return row && this.reads.findInOrg(orgId, id);
  }

  async busy(serverId: string): Promise<boolean> {
    const rows = await this.db.query<{ busy: boolean }>(`SELECT EXISTS (${UNFINISHED_SERVER_OPERATION}) AS busy FROM servers s WHERE s.id = $1`, [serverId]);
    return rows[0]?.busy === true;
  }

  async apply(serverId: string, change: ServerStateChange): Promise<{ firewallRuleIds: string[] }> {
    const sets: string[] = [];
    const params: unknown[] = [serverId];
    const set = (column: string, value: unknown) => {
      params.push(value);
      sets.push(`${column} = $${params.length}`);
    };
    if (change.status !== undefined) set('status', change.status);
    if (change.instanceMissingSince !== undefined) set('instance_missing_since', change.instanceMissingSince);
    if (change.resizeReservedVcpus !== undefined) set('resize_reserved_vcpus', change.resizeReservedVcpus);
    // deleted_at set: the triggers make it `deleted`, drop its ipv4 and give its vCPUs back to the region.
    if (change.deletedAt !== undefined) set('deleted_at', change.deletedAt);
    if (sets.length > 0) await this.db.query(`UPDATE servers SET ${sets.join(', ')} WHERE id = $1`, params);
    if (change.deletedAt === undefined) return { firewallRuleIds: [] };
    const rules = await this.db.query<{ id: string }>('DELETE FROM firewall_rules WHERE server_id = $1 RETURNING id', [serverId]);
    return { firewallRuleIds: rules.map((r) => r.id).sort() };
  }
}
