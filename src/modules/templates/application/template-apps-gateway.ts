import { Injectable } from '@nestjs/common';
import { CircuitGateway } from '../../operations/application/provider-circuit';
import { ComputeHealth } from '../../servers/application/compute-provider.port';
import { AppPage, AppsUnavailable, ProviderApp, TemplateApps } from './template-apps.port';

/**
 * The worker's way to the compute provider's apps, through the circuit every provider gateway
 * shares (ProviderCircuit: 5 failed calls open it, a probe every second, AppsUnavailable and
 * unclassified errors become StepUnavailable, retried with backoff; a DomainError is final).
 */
@Injectable()
export class TemplateAppsGateway extends CircuitGateway {
  constructor(private readonly apps: TemplateApps) {
    super({ context: 'ComputeProviderApps', label: 'compute provider', unavailable: AppsUnavailable, ping: () => apps.ping() });
  }

  install(input: { deploymentId: string; step: string; serverId: string; template: string; version: string }): Promise<ProviderApp> {
    return this.call(() => this.apps.install(input));
  }
  configure(input: { deploymentId: string; step: string; variables: Record<string, string> }): Promise<ProviderApp> {
    return this.call(() => this.apps.configure(input));
  }
  startApp(input: { deploymentId: string; step: string }): Promise<ProviderApp> {
    return this.call(() => this.apps.startApp(input));
  }
  stopApp(input: { deploymentId: string; step: string }): Promise<ProviderApp | null> {
    return this.call(() => this.apps.stopApp(input));
  }
  check(input: { deploymentId: string; step: string }): Promise<{ health: 'healthy' | 'unhealthy' }> {
    return this.call(() => this.apps.check(input));
  }
  remove(input: { deploymentId: string; step: string }): Promise<void> {
    return this.call(() => this.apps.remove(input));
  }
  getApp(deploymentId: string): Promise<ProviderApp | null> {
    return this.call(() => this.apps.getApp(deploymentId));
  }
  listApps(page?: AppPage): Promise<ProviderApp[]> {
    return this.call(() => this.apps.listApps(page));
  }
}

/**
 * Whether deployment actions are refused with 503 provider_unavailable (recording nothing): the
 * compute provider is known to be down (its instances' circuit, ComputeHealth, or its apps').
 */
export abstract class DeploymentProviderHealth {
  abstract isDown(): boolean;
}

/** DeploymentProviderHealth from the compute provider's two circuits in this process. */
@Injectable()
export class ComputeAndAppsHealth extends DeploymentProviderHealth {
  constructor(
    private readonly compute: ComputeHealth,
    private readonly apps: TemplateAppsGateway,
  ) {
    super();
  }

  isDown(): boolean {
    return this.compute.isDown() || this.apps.isDown();
  }
}
