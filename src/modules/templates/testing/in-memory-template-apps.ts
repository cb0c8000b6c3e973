import { DomainError } from '../../../shared/kernel/errors/domain-error';
import { AppPage, AppsUnavailable, ProviderApp, TemplateApps } from '../application/template-apps.port';

/**
 * TemplateApps in memory, for unit tests: the same idempotency by (deployment, step) as the
 * simulated adapter, `down` failing every call with AppsUnavailable, `failing` the templates whose
 * install fails (DomainError internal), `unhealthy` those whose checks answer unhealthy.
 */
export class InMemoryTemplateApps extends TemplateApps {
  readonly apps = new Map<string, ProviderApp>();
  readonly calls = new Map<string, unknown>();
  down = false;
  readonly failing = new Set<string>();
  readonly unhealthy = new Set<string>();

  async install(input: { deploymentId: string; step: string; serverId: string; template: string; version: string }): Promise<ProviderApp> {
    return this.once(input.deploymentId, input.step, () => {
      if (this.failing.has(input.template)) throw new DomainError('internal', `Template ${input.template} ${input.version} failed to install`);
      const app: ProviderApp = { deploymentId: input.deploymentId, serverId: input.serverId, template: input.template, version: input.version, state: 'installed', variableNames: this.apps.get(input.deploymentId)?.variableNames ?? [] };
      this.apps.set(input.deploymentId, app);
      return { ...app };
    }) as Promise<ProviderApp>;
  }

  async configure(input: { deploymentId: string; step: string; variables: Record<string, string> }): Promise<ProviderApp> {
    return this.once(input.deploymentId, input.step, () => this.change(input.deploymentId, { variableNames: Object.keys(input.variables).sort() })) as Promise<ProviderApp>;
  }

  async startApp(input: { deploymentId: string; step: string }): Promise<ProviderApp> {
    return this.once(input.deploymentId, input.step, () => this.change(input.deploymentId, { state: 'running' })) as Promise<ProviderApp>;
  }

  async stopApp(input: { deploymentId: string; step: string }): Promise<ProviderApp | null> {
    return this.once(input.deploymentId, input.step, () => (this.apps.has(input.deploymentId) ? this.change(input.deploymentId, { state: 'stopped' }) : null)) as Promise<ProviderApp | null>;
  }

  async check(input: { deploymentId: string; step: string }): Promise<{ health: 'healthy' | 'unhealthy' }> {
    return this.once(input.deploymentId, input.step, () => {
      const app = this.apps.get(input.deploymentId);
      return { health: app && app.state === 'running' && !this.unhealthy.has(app.template) ? 'healthy' : 'unhealthy' };
    }) as Promise<{ health: 'healthy' | 'unhealthy' }>;
  }

  async remove(input: { deploymentId: string; step: string }): Promise<void> {
    await this.once(input.deploymentId, input.step, () => {
      this.apps.delete(input.deploymentId);
      return null;
    });
  }

  async getApp(deploymentId: string): Promise<ProviderApp | null> {
    this.reachable();
    const app = this.apps.get(deploymentId);
    return app ? { ...app } : null;
  }

  async listApps(page?: AppPage): Promise<ProviderApp[]> {
    this.reachable();
    return [...this.apps.values()]
      .filter((a) => a.deploymentId > (page?.after ?? ''))
      .sort((a, b) => (a.deploymentId < b.deploymentId ? -1 : 1))
      .slice(0, page?.limit ?? Infinity)
      .map((a) => ({ ...a }));
  }

  async ping(): Promise<void> {
    this.reachable();
  }

  private reachable(): void {
    if (this.down) throw new AppsUnavailable('The compute provider is down (in memory)');
  }

  private async once(deploymentId: string, step: string, work: () => unknown): Promise<unknown> {
    this.reachable();
    const key = `${deploymentId} ${step}`;
    if (this.calls.has(key)) return this.calls.get(key);
    const answer = work();
    this.calls.set(key, answer);
    return answer;
  }

  private change(deploymentId: string, change: Partial<ProviderApp>): ProviderApp {
    const app = this.apps.get(deploymentId);
    if (!app) throw new DomainError('internal', `No app of deployment ${deploymentId}`);
    Object.assign(app, change);
    return { ...app };
  }
}
