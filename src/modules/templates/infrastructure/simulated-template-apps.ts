import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable } from '@nestjs/common';
import { Settings } from '../../../shared/config/settings';
import { Db, UNIQUE_VIOLATION, sqlState } from '../../../shared/database/transaction';
import { UnitOfWork, WorkerUnitOfWork } from '../../../shared/database/unit-of-work';
import { DomainError } from '../../../shared/kernel/errors/domain-error';
import { AppPage, AppState, AppsUnavailable, ProviderApp, TemplateApps } from '../application/template-apps.port';

interface AppRow {
  deployment_id: string;
  server_id: string;
  template_id: string;
  version: string;
  state: AppState;
  variable_names: string[];
}

const APP_COLUMNS = 'deployment_id, server_id, template_id, version, state, variable_names';

const toApp = (r: AppRow): ProviderApp => ({
  deploymentId: r.deployment_id,
  serverId: r.server_id,
  template: r.template_id,
  version: r.version,
  state: r.state,
  variableNames: r.variable_names,
});

type Call =
  | { action: 'install'; serverId: string; template: string; version: string }
  | { action: 'configure'; variableNames: string[] }
  | { action: 'start' }
  | { action: 'stop' }
  | { action: 'check' }
  | { action: 'remove' };

/**
 * The compute provider's apps, simulated: kept in its own table (provider_apps), so they survive
 * restarts. Each changing call is idempotent by (deployment id, step): the first call that takes
 * effect is recorded with its answer in provider_app_calls, in the same short transaction (on the
 * worker's pool) as the app's change; the same call again answers that. The provider keeps the
 * names of the variables it is given, never their values.
 *
 * The template's `simulate` decides: deploy "fail" fails every install (a final DomainError
 * internal: deploys and updates fail at `installing`); health is what checks answer (an app that
 * is not running is unhealthy). PROVIDER_LATENCY_MS delays every call; PROVIDER_DOWN fails every
 * call (ping included) with AppsUnavailable; PROVIDER_FAULTS fails that share of calls at random,
 * half before the call takes effect and half after (the answer lost).
 */
@Injectable()
export class SimulatedTemplateApps extends TemplateApps {
  constructor(
    private readonly db: Db,
    @Inject(WorkerUnitOfWork) private readonly uow: UnitOfWork,
    private readonly settings: Settings,
  ) {
    super();
  }

  async install(input: { deploymentId: string; step: string; serverId: string; template: string; version: string }): Promise<ProviderApp> {
    return this.app(await this.call(input.deploymentId, input.step, { action: 'install', serverId: input.serverId, template: input.template, version: input.version }));
  }

  async configure(input: { deploymentId: string; step: string; variables: Record<string, string> }): Promise<ProviderApp> {
    return this.app(await this.call(input.deploymentId, input.step, { action: 'configure', variableNames: Object.keys(input.variables).sort() }));
  }

  async startApp(input: { deploymentId: string; step: string }): Promise<ProviderApp> {
    return this.app(await this.call(input.deploymentId, input.step, { action: 'start' }));
  }

  async stopApp(input: { deploymentId: string; step: string }): Promise<ProviderApp | null> {
    return (await this.call(input.deploymentId, input.step, { action: 'stop' })) as ProviderApp | null;
  }

  async check(input: { deploymentId: string; step: string }): Promise<{ health: 'healthy' | 'unhealthy' }> {
    return (await this.call(input.deploymentId, input.step, { action: 'check' })) as { health: 'healthy' | 'unhealthy' };
  }

  async remove(input: { deploymentId: string; step: string }): Promise<void> {
    await this.call(input.deploymentId, input.step, { action: 'remove' });
  }

  async getApp(deploymentId: string): Promise<ProviderApp | null> {
    await this.before();
    const rows = await this.uow.run(() => this.db.query<AppRow>(`SELECT ${APP_COLUMNS} FROM provider_apps WHERE deployment_id = $1 AND removed_at IS NULL`, [deploymentId]));
    return rows.length === 0 ? null : toApp(rows[0]);
  }

  async listApps(page?: AppPage): Promise<ProviderApp[]> {
    await this.before();
    const rows = await this.uow.run(() =>
      this.db.query<AppRow>(`SELECT ${APP_COLUMNS} FROM provider_apps WHERE removed_at IS NULL AND deployment_id > $1 ORDER BY deployment_id LIMIT $2`, [
        page?.after ?? '',
        page?.limit ?? null,
      ]),
    );
    return rows.map(toApp);
  }

  async ping(): Promise<void> {
    if (this.settings.providerDown) throw new AppsUnavailable('The compute provider is down (PROVIDER_DOWN)');
  }

  private app(answer: unknown): ProviderApp {
    if (!answer) throw new DomainError('internal', 'The compute provider answered no app');
    return answer as ProviderApp;
  }

  private async before(): Promise<'none' | 'after'> {
    if (this.settings.providerLatencyMs > 0) await sleep(this.settings.providerLatencyMs);
    if (this.settings.providerDown) throw new AppsUnavailable('The compute provider is down (PROVIDER_DOWN)');
    if (!(this.settings.providerFaults > 0 && Math.random() < this.settings.providerFaults)) return 'none';
    if (Math.random() < 0.5) throw new AppsUnavailable('The compute provider failed the call (PROVIDER_FAULTS)');
    return 'after';
  }

  private async call(deploymentId: string, step: string, input: Call): Promise<unknown> {
    const fault = await this.before();
    const answer = await this.record(deploymentId, step, input);
    if (fault === 'after') throw new AppsUnavailable('The compute provider took the call but its answer was lost (PROVIDER_FAULTS)');
    return answer;
  }

  private async record(deploymentId: string, step: string, input: Call): Promise<unknown> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.uow.run(async () => {
          const prior = await this.db.one<{ response: unknown }>(
            'SELECT response FROM provider_app_calls WHERE deployment_id = $1 AND step = $2',
            [deploymentId, step],
            'provider_app_calls_find',
          );
          if (prior) return prior.response;
          const row = await this.db.one<AppRow>(`SELECT ${APP_COLUMNS} FROM provider_apps WHERE deployment_id = $1 AND removed_at IS NULL FOR UPDATE`, [deploymentId]);
          const answer = await this.apply(deploymentId, row && toApp(row), input);
          await this.db.query('INSERT INTO provider_app_calls (deployment_id, step, action, response) VALUES ($1, $2, $3, $4::jsonb)', [
            deploymentId, step, input.action, answer === null ? null : JSON.stringify(answer),
          ]);
          return answer;
        });
      } catch (err) {
        if (sqlState(err) === UNIQUE_VIOLATION && attempt < 3) continue;
        throw err;
      }
    }
  }

  /** The call's effect on the app (in the recording transaction); its answer. */
  private async apply(deploymentId: string, app: ProviderApp | undefined, input: Call): Promise<unknown> {
    const set = async (sql: string, params: unknown[]): Promise<ProviderApp> => {
      const rows = await this.db.query<AppRow>(`${sql} RETURNING ${APP_COLUMNS}`, params);
      return toApp(rows[0]);
    };
    switch (input.action) {
      case 'install': {
        const simulate = await this.simulation(input.template);
        if (simulate.deploy === 'fail') throw new DomainError('internal', `Template ${input.template} ${input.version} failed to install`);
        if (app) return set(`UPDATE provider_apps SET version = $2, state = 'installed' WHERE deployment_id = $1 AND removed_at IS NULL`, [deploymentId, input.version]);
        // A removed app of the deployment is replaced (the row is the deployment's one app).
        await this.db.query('DELETE FROM provider_apps WHERE deployment_id = $1', [deploymentId]);
        return set(`INSERT INTO provider_apps (deployment_id, server_id, template_id, version, state) VALUES ($1, $2, $3, $4, 'installed')`, [
          deploymentId, input.serverId, input.template, input.version,
        ]);
      }
      case 'configure':
        if (!app) throw new DomainError('internal', `No app of deployment ${deploymentId} to configure`);
        return set('UPDATE provider_apps SET variable_names = $2::text[] WHERE deployment_id = $1 AND removed_at IS NULL', [deploymentId, input.variableNames]);
      case 'start':
        if (!app) throw new DomainError('internal', `No app of deployment ${deploymentId} to start`);
        return set(`UPDATE provider_apps SET state = 'running' WHERE deployment_id = $1 AND removed_at IS NULL`, [deploymentId]);
      case 'stop':
        if (!app) return null;
        return set(`UPDATE provider_apps SET state = 'stopped' WHERE deployment_id = $1 AND removed_at IS NULL`, [deploymentId]);
      case 'check': {
        if (!app || app.state !== 'running') return { health: 'unhealthy' };
        return { health: (await this.simulation(app.template)).health };
      }
      case 'remove':
        await this.db.query('UPDATE provider_apps SET removed_at = now() WHERE deployment_id = $1 AND removed_at IS NULL', [deploymentId]);
        return null;
    }
  }

  private async simulation(templateId: string): Promise<{ deploy: 'ok' | 'fail'; health: 'healthy' | 'unhealthy' }> {
    const row = await this.db.one<{ simulate: { deploy?: 'ok' | 'fail'; health?: 'healthy' | 'unhealthy' } | null }>('SELECT simulate FROM templates WHERE id = $1', [templateId]);
    return { deploy: row?.simulate?.deploy ?? 'ok', health: row?.simulate?.health ?? 'healthy' };
  }
}
