import { Db } from '../../../shared/database/transaction';
import { AppsUnavailable, ProviderApp, TemplateApps } from '../../templates/application/template-apps.port';
import { Finding, InvariantCheck } from '../application/invariant-checks.port';

interface DeploymentRow {
  id: string;
  org_id: string;
  server_id: string;
  template_id: string;
  version: string;
  status: string;
  server_deleted: boolean;
  busy: boolean;
}

/**
 * servers.md "Templates and deployments": the compute provider's apps are the active
 * deployments. Every active deployment (its server with no template or vm operation in flight)
 * has a running app of its template and version at the provider; no live app of a live server
 * belongs to a removed or unknown deployment; no deployment of a deleted server is left
 * unremoved (an app on a deleted server went with its instance). The apps come from the
 * TemplateApps port (a real provider's adapter is checked the same way).
 */
export class TemplateAppsCheck implements InvariantCheck {
  readonly name = 'provider.apps_match_deployments';
  readonly description =
    'Every active deployment (no operation in flight on its server) has a running app of its version at the compute provider; no app of a live server belongs to a removed or unknown deployment; a deleted server has no deployment left unremoved';

  constructor(
    private readonly db: Db,
    private readonly apps: TemplateApps,
  ) {}

  async findViolations(): Promise<Finding[]> {
    let apps: ProviderApp[];
    try {
      apps = await this.apps.listApps();
    } catch (err) {
      if (!(err instanceof AppsUnavailable)) throw err;
      return [{ subject: 'provider', message: `the compute provider could not list its apps: ${err.message}`, details: {} }];
    }
    const byDeployment = new Map(apps.map((a) => [a.deploymentId, a]));
    const rows = await this.db.query<DeploymentRow>(
      `SELECT d.id, d.org_id, d.server_id, d.template_id, d.version, d.status, s.deleted_at IS NOT NULL AS server_deleted,
              EXISTS (SELECT 1 FROM operations o WHERE o.vm_id = d.server_id AND o.status IN ('pending', 'running')
                         AND (o.type LIKE 'template.%' OR o.type LIKE 'vm.%')) AS busy
         FROM deployments d JOIN servers s ON s.id = d.server_id
        WHERE d.status <> 'removed' OR d.id = ANY($1::text[])
        ORDER BY d.id`,
      [apps.map((a) => a.deploymentId)],
    );
    const deletedServers = new Set(
      (await this.db.query<{ id: string }>(`SELECT id FROM servers WHERE deleted_at IS NOT NULL AND id = ANY($1::text[])`, [apps.map((a) => a.serverId)])).map((r) => r.id),
    );
    const found: Finding[] = [];
    const known = new Set<string>();
    for (const d of rows) {
      known.add(d.id);
      const app = byDeployment.get(d.id);
      const details = { org_id: d.org_id, server_id: d.server_id, status: d.status, version: d.version, app_version: app?.version ?? null, app_state: app?.state ?? null };
      if (d.server_deleted) {
        if (d.status !== 'removed') found.push({ subject: d.id, message: `deployment is ${d.status} but its server ${d.server_id} is deleted`, details });
        continue;
      }
      if (d.busy) continue;
      if (d.status === 'removed') {
        if (app) found.push({ subject: d.id, message: 'deployment is removed but its app is still at the provider', details });
      } else if (d.status === 'active') {
        if (!app) found.push({ subject: d.id, message: 'active deployment has no app at the provider', details });
        else if (app.version !== d.version || app.state !== 'running' || app.template !== d.template_id) {
          found.push({ subject: d.id, message: `active deployment of ${d.template_id} ${d.version} but the provider runs ${app.template} ${app.version} (${app.state})`, details });
        }
      }
    }
    for (const a of apps) {
      if (!known.has(a.deploymentId) && !deletedServers.has(a.serverId)) {
        found.push({ subject: a.deploymentId, message: `the provider holds an app of ${a.template} on ${a.serverId} for a deployment that does not exist`, details: { server_id: a.serverId } });
      }
    }
    return found;
  }
}
