/**
 * The compute provider's apps (servers.md "The compute provider and the operations": install,
 * update, check, remove an app), a port of their own beside ComputeProvider's instances. Every
 * changing call is idempotent by (deployment id, step), `step` being `<operation id>/<step name>`:
 * called again after a crash or a lost answer it answers as the first call did and changes
 * nothing twice. A call never runs inside a database transaction or under a row lock.
 *
 * An adapter throws AppsUnavailable when the provider cannot be reached (retried with backoff,
 * the circuit counts it); a DomainError is the provider's final answer (the operation fails).
 */
export type AppState = 'installed' | 'running' | 'stopped';

export interface ProviderApp {
  deploymentId: string;
  serverId: string;
  template: string;
  version: string;
  state: AppState;
  /** The names of the variables it was configured with (the provider's record keeps no value). */
  variableNames: string[];
}

export class AppsUnavailable extends Error {
  constructor(message = 'The compute provider is unavailable') {
    super(message);
    this.name = 'AppsUnavailable';
  }
}

export interface AppPage {
  after?: string;
  limit: number;
}

export abstract class TemplateApps {
  /** Installs `template` at `version` on the server (a new app, or the app moved to that version), not started. */
  abstract install(input: { deploymentId: string; step: string; serverId: string; template: string; version: string }): Promise<ProviderApp>;
  /** Gives the app its variables (secret values included: they reach the provider, never its answers). */
  abstract configure(input: { deploymentId: string; step: string; variables: Record<string, string> }): Promise<ProviderApp>;
  abstract startApp(input: { deploymentId: string; step: string }): Promise<ProviderApp>;
  /** Stopping an app that does not exist (never installed, or removed) succeeds with null. */
  abstract stopApp(input: { deploymentId: string; step: string }): Promise<ProviderApp | null>;
  /** The app's health as the provider sees it now. */
  abstract check(input: { deploymentId: string; step: string }): Promise<{ health: 'healthy' | 'unhealthy' }>;
  /** Removing an app that does not exist succeeds. */
  abstract remove(input: { deploymentId: string; step: string }): Promise<void>;
  /** The provider's truth: the live app of the deployment, or null. A read. */
  abstract getApp(deploymentId: string): Promise<ProviderApp | null>;
  /** The live apps, by deployment id, a page at a time (cli verify). */
  abstract listApps(page?: AppPage): Promise<ProviderApp[]>;
  /** Resolves when the provider answers, throws AppsUnavailable otherwise. */
  abstract ping(): Promise<void>;
}
