import { Injectable } from '@nestjs/common';
import { Db, UNIQUE_VIOLATION, constraintOf, sqlState } from '../../../shared/database/transaction';
import { DomainError } from '../../../shared/kernel/errors/domain-error';
import { Page, toPage } from '../../../shared/kernel/pagination/cursor';
import { DeploymentChange, DeploymentListQuery, DeploymentRepository, DeploymentServer, TemplateDeployments } from '../application/deployments.port';
import { Deployment, DeploymentHealth, DeploymentStatus } from '../domain/deployment';

interface DeploymentRow {
  id: string;
  org_id: string;
  server_id: string;
  template_id: string;
  version: string;
  status: DeploymentStatus;
  health: DeploymentHealth;
  health_checked_at: Date | null;
  variables: Record<string, string>;
  secrets_sealed: string | null;
  pending_version: string | null;
  pending_variables: Record<string, string> | null;
  pending_secrets_sealed: string | null;
  created_at: Date;
  removed_at: Date | null;
  created_at_text: string;
}

const COLUMNS = `id, org_id, server_id, template_id, version, status, health, health_checked_at, variables, secrets_sealed, pending_version,
  pending_variables, pending_secrets_sealed, created_at, removed_at,
  to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at_text`;

const toDeployment = (r: DeploymentRow): Deployment => ({
  id: r.id,
  orgId: r.org_id,
  serverId: r.server_id,
  template: r.template_id,
  version: r.version,
  status: r.status,
  health: r.health,
  healthCheckedAt: r.health_checked_at,
  variables: r.variables,
  secretsSealed: r.secrets_sealed,
  pendingVersion: r.pending_version,
  pendingVariables: r.pending_variables,
  pendingSecretsSealed: r.pending_secrets_sealed,
  createdAt: r.created_at,
  removedAt: r.removed_at,
});

const CHANGE_COLUMNS: { [K in keyof Required<DeploymentChange>]: { column: string; cast?: string; json?: boolean } } = {
  version: { column: 'version' },
  status: { column: 'status' },
  health: { column: 'health' },
  healthCheckedAt: { column: 'health_checked_at', cast: 'timestamptz' },
  variables: { column: 'variables', cast: 'jsonb', json: true },
  secretsSealed: { column: 'secrets_sealed' },
  pendingVersion: { column: 'pending_version' },
  pendingVariables: { column: 'pending_variables', cast: 'jsonb', json: true },
  pendingSecretsSealed: { column: 'pending_secrets_sealed' },
  removedAt: { column: 'removed_at', cast: 'timestamptz' },
};

@Injectable()
export class TypeOrmDeploymentRepository extends DeploymentRepository {
  constructor(private readonly db: Db) {
    super();
  }

  async serverInOrg(orgId: string, serverId: string): Promise<boolean> {
    return (await this.db.one('SELECT 1 FROM servers WHERE org_id = $1 AND id = $2', [orgId, serverId])) !== undefined;
  }

  async lockServer(orgId: string, serverId: string): Promise<DeploymentServer | undefined> {
    const row = await this.db.one<{ id: string; status: string; deleted_at: Date | null }>(
      'SELECT id, status, deleted_at FROM servers WHERE org_id = $1 AND id = $2 FOR UPDATE',
      [orgId, serverId],
      'deployments_lock_server',
    );
    return row && { id: row.id, status: row.status, deleted: row.deleted_at !== null };
  }

  async unfinishedServerOperation(serverId: string): Promise<string | undefined> {
    const row = await this.db.one<{ id: string }>(
      `SELECT id FROM operations WHERE vm_id = $1 AND status IN ('pending', 'running') AND (type LIKE 'vm.%' OR type LIKE 'template.%') LIMIT 1`,
      [serverId],
      'deployments_unfinished_server_op',
    );
    return row?.id;
  }

  async liveOnServer(serverId: string, templateId: string): Promise<string | undefined> {
    const row = await this.db.one<{ id: string }>(
      `SELECT id FROM deployments WHERE server_id = $1 AND template_id = $2 AND status <> 'removed'`,
      [serverId, templateId],
      'deployments_live_on_server',
    );
    return row?.id;
  }

  async countLiveOnServer(serverId: string): Promise<number> {
    const row = await this.db.one<{ n: string }>(`SELECT count(*)::text AS n FROM deployments WHERE server_id = $1 AND status <> 'removed'`, [serverId], 'deployments_count_live');
    return Number(row?.n ?? 0);
  }

  async insert(d: Deployment): Promise<void> {
    try {
      await this.db.query(
        `INSERT INTO deployments (id, org_id, server_id, template_id, version, status, health, health_checked_at, variables, secrets_sealed,
                                  pending_version, pending_variables, pending_secrets_sealed, created_at, removed_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, $11, $12::jsonb, $13, $14, $15)`,
        [
          d.id, d.orgId, d.serverId, d.template, d.version, d.status, d.health, d.healthCheckedAt, JSON.stringify(d.variables), d.secretsSealed,
          d.pendingVersion, d.pendingVariables && JSON.stringify(d.pendingVariables), d.pendingSecretsSealed, d.createdAt, d.removedAt,
        ],
      );
    } catch (err) {
      if (sqlState(err) === UNIQUE_VIOLATION && constraintOf(err) === 'deployments_one_per_server_template') {
        throw new DomainError('conflict', `Template ${d.template} is on server ${d.serverId} already`);
      }
      throw err;
    }
  }

  async findInOrg(orgId: string, id: string): Promise<Deployment | undefined> {
    const row = await this.db.one<DeploymentRow>(`SELECT ${COLUMNS} FROM deployments WHERE org_id = $1 AND id = $2`, [orgId, id], 'deployments_find_in_org');
    return row && toDeployment(row);
  }

  async lockInOrg(orgId: string, id: string): Promise<Deployment | undefined> {
    const row = await this.db.one<DeploymentRow>(`SELECT ${COLUMNS} FROM deployments WHERE org_id = $1 AND id = $2 FOR UPDATE`, [orgId, id], 'deployments_lock_in_org');
    return row && toDeployment(row);
  }

  async list(orgId: string, query: DeploymentListQuery): Promise<Page<Deployment>> {
    const params: unknown[] = [orgId];
    const where = ['org_id = $1'];
    if (query.status === undefined) where.push(`status <> 'removed'`);
    else {
      params.push(query.status);
      where.push(`status = $${params.length}`);
    }
    if (query.serverId !== undefined) {
      params.push(query.serverId);
      where.push(`server_id = $${params.length}`);
    }
    if (query.after) {
      params.push(query.after.createdAt, query.after.id);
      where.push(`(created_at, id) < ($${params.length - 1}::timestamptz, $${params.length})`);
    }
    params.push(query.limit + 1);
    const rows = await this.db.query<DeploymentRow>(
      `SELECT ${COLUMNS} FROM deployments WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT $${params.length}`,
      params,
    );
    return toPage(rows, query.limit, (r) => ({ createdAt: r.created_at_text, id: r.id }), toDeployment);
  }

  async apply(id: string, change: DeploymentChange): Promise<void> {
    const sets: string[] = [];
    const params: unknown[] = [id];
    for (const [k, spec] of Object.entries(CHANGE_COLUMNS) as [keyof DeploymentChange, { column: string; cast?: string; json?: boolean }][]) {
      const value = change[k];
      if (value === undefined) continue;
      params.push(spec.json && value !== null ? JSON.stringify(value) : value);
      sets.push(`${spec.column} = $${params.length}${spec.cast ? `::${spec.cast}` : ''}`);
    }
    if (sets.length === 0) return;
    const { affected } = await this.db.exec(`UPDATE deployments SET ${sets.join(', ')} WHERE id = $1`, params);
    if (affected !== 1) throw new Error(`Deployment ${id} does not exist`);
  }
}

/** TemplateDeployments for the servers module, in the caller's transaction. */
@Injectable()
export class TypeOrmTemplateDeployments extends TemplateDeployments {
  constructor(private readonly db: Db) {
    super();
  }

  async removeAllForServer(serverId: string): Promise<string[]> {
    const rows = await this.db.query<{ id: string }>(
      `UPDATE deployments SET status = 'removed', removed_at = now(), pending_version = NULL, pending_variables = NULL, pending_secrets_sealed = NULL
        WHERE server_id = $1 AND status <> 'removed' RETURNING id`,
      [serverId],
    );
    return rows.map((r) => r.id).sort();
  }
}
