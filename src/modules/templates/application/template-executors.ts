import { Injectable, OnModuleInit } from '@nestjs/common';
import { Clock } from '../../../shared/kernel/clock/clock';
import { invalidState } from '../../../shared/kernel/errors/domain-error';
import { OperationExecutor, OperationExecutors, OperationStepExecutor } from '../../operations/application/operation-executors';
import { ProviderTruth, readProviderTruth } from '../../operations/application/provider-truth';
import { JsonObject, Operation, OperationError } from '../../operations/domain/operation';
import { Deployment, DeploymentStatus } from '../domain/deployment';
import { DeploymentSecrets } from './deployment-secrets';
import { DeploymentRepository } from './deployments.port';
import { TemplateAppsGateway } from './template-apps-gateway';
import { ProviderApp } from './template-apps.port';

/**
 * The worker's executors of template.deploy, .update, .health and .remove (servers.md "The
 * compute provider and the operations"). Each provider call is made in `perform`, outside any
 * transaction, through the TemplateAppsGateway, idempotent by (deployment, `<operation id>/<step>`);
 * `commit` records the outcome on the deployment row in the step's short transaction.
 *
 * The secret variables reach the provider in `configuring`: perform reads the deployment row and
 * opens its sealed secrets there; they are never copied into the operation (params, result,
 * error) nor logged.
 */
const key = (op: Operation, step: string): string => `${op.id}/${step}`;

@Injectable()
abstract class TemplateExecutor implements OperationExecutor, OnModuleInit {
  abstract readonly type: OperationExecutor['type'];
  abstract readonly steps: readonly OperationStepExecutor[];

  constructor(
    protected readonly deployments: DeploymentRepository,
    protected readonly apps: TemplateAppsGateway,
    protected readonly secrets: DeploymentSecrets,
    protected readonly executors: OperationExecutors,
    protected readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    this.executors.register(this);
  }

  protected deploymentId(op: Operation): string {
    const id = op.snapshot().deploymentId;
    if (!id) throw invalidState(`Operation ${op.id} names no deployment`);
    return id;
  }

  protected serverId(op: Operation): string {
    const id = op.snapshot().vmId;
    if (!id) throw invalidState(`Operation ${op.id} names no server`);
    return id;
  }

  /** The operation's deployment, read (perform) or locked (commit, failed). */
  protected async read(op: Operation, lock: boolean): Promise<Deployment> {
    const id = this.deploymentId(op);
    const d = lock ? await this.deployments.lockInOrg(op.orgId, id) : await this.deployments.findInOrg(op.orgId, id);
    if (!d) throw invalidState(`Deployment ${id} no longer exists`);
    return d;
  }

  /** The provider's truth about the operation's app. */
  observe(op: Operation): Promise<ProviderTruth<ProviderApp | null>> {
    return readProviderTruth(() => this.apps.getApp(this.deploymentId(op)));
  }

  protected installingStep(version: (op: Operation, d: Deployment) => string): OperationStepExecutor {
    return {
      name: 'installing',
      perform: async (op) => {
        const d = await this.read(op, false);
        await this.apps.install({ deploymentId: d.id, step: key(op, 'installing'), serverId: d.serverId, template: d.template, version: version(op, d) });
        return {};
      },
      commit: async () => undefined,
    };
  }

  /** `configuring`: the variables (secret values opened here, from the row) handed to the provider. */
  protected configuringStep(pending: boolean): OperationStepExecutor {
    return {
      name: 'configuring',
      perform: async (op) => {
        const d = await this.read(op, false);
        const shown = pending ? (d.pendingVariables ?? d.variables) : d.variables;
        const secrets = this.secrets.open(d.id, pending ? d.pendingSecretsSealed : d.secretsSealed);
        await this.apps.configure({ deploymentId: d.id, step: key(op, 'configuring'), variables: { ...shown, ...secrets } });
        return {};
      },
      commit: async () => undefined,
    };
  }

  protected stoppingStep(): OperationStepExecutor {
    return {
      name: 'stopping_app',
      perform: async (op) => {
        await this.apps.stopApp({ deploymentId: this.deploymentId(op), step: key(op, 'stopping_app') });
        return {};
      },
      commit: async () => undefined,
    };
  }

  protected startingStep(commit: (op: Operation) => Promise<JsonObject>): OperationStepExecutor {
    return {
      name: 'starting_app',
      perform: async (op) => {
        await this.apps.startApp({ deploymentId: this.deploymentId(op), step: key(op, 'starting_app') });
        return {};
      },
      commit,
    };
  }
}

/** template.deploy: installing, configuring, starting_app → `active`. Failure: `failed`. */
@Injectable()
export class DeployTemplateExecutor extends TemplateExecutor {
  readonly type = 'template.deploy' as const;
  readonly steps: readonly OperationStepExecutor[] = [
    this.installingStep((_op, d) => d.version),
    this.configuringStep(false),
    this.startingStep(async (op) => {
      const d = await this.read(op, true);
      await this.deployments.apply(d.id, { status: 'active', health: 'unknown', healthCheckedAt: null });
      return { deployment_id: d.id, template: d.template, version: d.version, status: 'active' };
    }),
  ];

  /**
   * `failed`, whatever the provider holds: an app a lost answer left installed stays there until
   * an update (a retry) re-applies it or a removal takes it away; `cli verify` counts it.
   */
  async failed(op: Operation): Promise<void> {
    const d = await this.deployments.lockInOrg(op.orgId, this.deploymentId(op));
    if (!d || d.status !== 'deploying') return;
    await this.deployments.apply(d.id, { status: 'failed', health: 'unknown', healthCheckedAt: null });
  }
}

/**
 * template.update: stopping_app, installing, configuring, starting_app → `active` with the new
 * version and variables. Failure: `failed`, the old version and variables kept.
 */
@Injectable()
export class UpdateDeploymentExecutor extends TemplateExecutor {
  readonly type = 'template.update' as const;
  readonly steps: readonly OperationStepExecutor[] = [
    this.stoppingStep(),
    this.installingStep((op, d) => d.pendingVersion ?? String(op.params.version)),
    this.configuringStep(true),
    this.startingStep(async (op) => {
      const d = await this.read(op, true);
      const version = d.pendingVersion ?? d.version;
      await this.deployments.apply(d.id, {
        status: 'active',
        version,
        variables: d.pendingVariables ?? d.variables,
        secretsSealed: d.pendingVariables ? d.pendingSecretsSealed : d.secretsSealed,
        pendingVersion: null,
        pendingVariables: null,
        pendingSecretsSealed: null,
      });
      return { deployment_id: d.id, version, status: 'active' };
    }),
  ];

  async failed(op: Operation): Promise<void> {
    const d = await this.deployments.lockInOrg(op.orgId, this.deploymentId(op));
    if (!d || d.status !== 'updating') return;
    await this.deployments.apply(d.id, { status: 'failed', pendingVersion: null, pendingVariables: null, pendingSecretsSealed: null });
  }
}

/** template.health: checking → sets health and health_checked_at. Failure: unchanged. */
@Injectable()
export class CheckHealthExecutor extends TemplateExecutor {
  readonly type = 'template.health' as const;
  readonly steps: readonly OperationStepExecutor[] = [
    {
      name: 'checking',
      perform: async (op) => {
        const answer = await this.apps.check({ deploymentId: this.deploymentId(op), step: key(op, 'checking') });
        return { health: answer.health };
      },
      commit: async (op, performed) => {
        const d = await this.read(op, true);
        const health = performed?.health === 'healthy' ? 'healthy' : 'unhealthy';
        const checkedAt = this.clock.now();
        await this.deployments.apply(d.id, { health, healthCheckedAt: checkedAt });
        return { deployment_id: d.id, health, checked_at: checkedAt.toISOString() };
      },
    },
  ];

  async failed(): Promise<void> {
    // A check that could not be made changes nothing.
  }
}

/**
 * template.remove: stopping_app, uninstalling → `removed` (readable). Failure: the status before
 * (from the operation's params), unless the provider shows the app gone after `uninstalling` was
 * tried (a removal whose answer was lost): then `removed`. When the provider cannot be read it
 * returns to its former status, and a new removal (idempotent at the provider) settles it.
 */
@Injectable()
export class RemoveDeploymentExecutor extends TemplateExecutor {
  readonly type = 'template.remove' as const;
  readonly steps: readonly OperationStepExecutor[] = [
    this.stoppingStep(),
    {
      name: 'uninstalling',
      perform: async (op) => {
        await this.apps.remove({ deploymentId: this.deploymentId(op), step: key(op, 'uninstalling') });
        return {};
      },
      commit: async (op) => {
        const d = await this.read(op, true);
        await this.deployments.apply(d.id, { status: 'removed', removedAt: this.clock.now() });
        return { deployment_id: d.id, status: 'removed' };
      },
    },
  ];

  async failed(op: Operation, _error: OperationError, truth?: ProviderTruth<unknown>): Promise<void> {
    const d = await this.deployments.lockInOrg(op.orgId, this.deploymentId(op));
    if (!d || d.status !== 'removing') return;
    if (truth?.known && truth.value === null && op.snapshot().steps.some((s) => s.name === 'uninstalling' && s.status !== 'pending')) {
      await this.deployments.apply(d.id, { status: 'removed', removedAt: this.clock.now() });
      return;
    }
    const former = op.params.from_status;
    await this.deployments.apply(d.id, { status: (former === 'active' || former === 'failed' ? former : 'failed') as DeploymentStatus });
  }
}
