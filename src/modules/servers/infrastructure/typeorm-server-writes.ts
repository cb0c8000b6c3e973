import { Injectable } from '@nestjs/common';
import { Db, UNIQUE_VIOLATION, constraintOf, sqlState } from '../../../shared/database/transaction';
import { ServerChanges, ServerWrites } from '../application/servers.port';
import { Server, nameTaken } from '../domain/server';
import { TypeOrmServerReads } from './typeorm-server-reads';

@Injectable()
export class TypeOrmServerWrites extends ServerWrites {
  private readonly reads: TypeOrmServerReads;

  constructor(private readonly db: Db) {
    super();
    this.reads = new TypeOrmServerReads(db);
  }

  async lockInOrg(orgId: string, id: string): Promise<Server | undefined> {
    const row = await this.db.one('SELECT id FROM servers WHERE org_id = $1 AND id = $2 FOR UPDATE', [orgId, id], 'servers_lock_for_edit');
    return row && this.reads.findInOrg(orgId, id);
  }

  async liveIdByName(orgId: string, name: string): Promise<string | undefined> {
    const row = await this.db.one<{ id: string }>('SELECT id FROM servers WHERE org_id = $1 AND name = $2 AND deleted_at IS NULL', [orgId, name]);
    return row?.id;
  }

  async update(orgId: string, id: string, changes: ServerChanges): Promise<void> {
    const sets: string[] = [];
    const params: unknown[] = [orgId, id];
    const set = (column: string, value: unknown) => {
      params.push(value);
      sets.push(`${column} = $${params.length}`);
    };
    if (changes.name !== undefined) set('name', changes.name);
    if (changes.labels !== undefined) set('labels', JSON.stringify(changes.labels));
    if (changes.deleteProtection !== undefined) set('delete_protection', changes.deleteProtection);
    if (changes.autoRenew !== undefined) {
      set('auto_renew_enabled', changes.autoRenew.enabled);
      set('auto_renew_term_months', changes.autoRenew.termMonths);
      set('auto_renew_lead_s', changes.autoRenew.leadS);
    }
    if (sets.length === 0) return;
    try {
      await this.db.query(`UPDATE servers SET ${sets.join(', ')} WHERE org_id = $1 AND id = $2`, params);
    } catch (err) {
      if (sqlState(err) === UNIQUE_VIOLATION && constraintOf(err) === 'servers_org_name_live_key') throw nameTaken(changes.name!, undefined);
      throw err;
    }
  }
}
