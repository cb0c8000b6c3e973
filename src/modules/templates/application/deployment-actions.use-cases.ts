import { assertNotSuspended } from '../../prepaid/domain/suspension';
import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { DomainError, invalidState, notFound } from '../../../shared/kernel/errors/domain-error';
import { newId } from '../../../shared/kernel/ids/ids';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { Principal } from '../../auth/domain/principal';
import { OperationRepository } from '../../operations/application/operations.port';
import { JsonObject, Operation, OperationType } from '../../operations/domain/operation';
import { auditActor } from '../../audit/application/audit-actor';
import { DEPLOYMENTS_PER_SERVER, Deployment, DeploymentStatus, changedMembers, resolveVariables, resolveVersion } from '../domain/deployment';
import { Template } from '../domain/template';
import { DeploymentSecrets } from './deployment-secrets';
import { DeploymentChange, DeploymentRepository, DeploymentServer } from './deployments.port';
import { DeploymentProviderHealth } from './template-apps-gateway';
import { TemplateCatalog } from './template-catalog.port';

export interface DeploymentActionResult {
  deployment: Deployment;
  operation: Operation;
}

/** The steps of each template operation (servers.md's operations table). */
export const TEMPLATE_STEPS: Record<'template.deploy' | 'template.update' | 'template.health' | 'template.remove', string[]> = {
  'template.deploy': ['installing', 'configuring', 'starting_app'],
  'template.update': ['stopping_app', 'installing', 'configuring', 'starting_app'],
  'template.health': ['checking'],
  'template.remove': ['stopping_app', 'uninstalling'],
};

export const providerUnavailable = (): DomainError =>
  new DomainError('provider_unavailable', 'The compute provider is unavailable; nothing was recorded. Try again later');

/** 409 invalid_state naming the server's unfinished operation. */
export const serverBusy = (serverId: string, operationId: string): DomainError =>
  new DomainError('invalid_state', `Server ${serverId} already has an operation pending or running (${operationId}); wait for it to end`, {
    operation_id: operationId,
  });

const isServerBusyViolation = (err: unknown): boolean => {
  const e = err as { code?: string; constraint?: string; driverError?: { code?: string; constraint?: string } };
  return (e.driverError?.code ?? e.code) === '23505' && (e.driverError?.constraint ?? e.constraint) === 'operations_one_unfinished_server_op';
};

/**
 * What the four deployment actions share, in one transaction: the server locked (its template.*
 * and vm.* operations are decided under that lock), the unfinished operation first (409 with
 * details.operation_id), then the server's status (running), the action's own 409s, the
 * operation, the deployment's change, the audit row; the provider's health last (503, the
 * transaction rolled back: nothing recorded). The unique index on operations (vm_id) stays the
 * last word: its violation (a vm.* operation accepted by a path that does not lock the server)
 * is answered as the unfinished operation it found.
 */
@Injectable()
export class DeploymentActionRunner {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly deployments: DeploymentRepository,
    private readonly operations: OperationRepository,
    private readonly audit: AuditTrail,
    private readonly health: DeploymentProviderHealth,
    private readonly clock: Clock,
  ) {}

  async run(
    principal: Principal,
    ip: string | null,
    action: {
      type: OperationType;
      /** Looks up what the path names (404, then 400 that depend on it); returns the server id and the deployment id. */
      locate: () => Promise<{ serverId: string; deploymentId: string }>;
      /** After the unfinished-operation and server-status checks: the action's 409s. */
      check: (server: DeploymentServer) => Promise<void>;
      /** The deployment's row at acceptance (inserted or changed), the operation's params and the audit data. */
      apply: (operationId: string) => Promise<{ params: JsonObject; audit: JsonObject | null }>;
    },
  ): Promise<DeploymentActionResult> {
    let serverId: string | undefined;
    try {
      return await this.uow.run(async () => {
        const located = await action.locate();
        serverId = located.serverId;
        const server = await this.deployments.lockServer(principal.orgId, located.serverId);
        if (!server) throw notFound(`Server ${located.serverId} not found`);
        const busy = await this.deployments.unfinishedServerOperation(server.id);
        if (busy) throw serverBusy(server.id, busy);
        if (!server.deleted) assertNotSuspended(server, 'Server', 'deploy to it');
        if (server.deleted || server.status !== 'running') {
          throw invalidState(`Server ${server.id} is ${server.deleted ? 'deleted' : server.status}; deployments need a running server`);
        }
        await action.check(server);
        const operationId = newId('op');
        const planned = await action.apply(operationId);
        const operation = Operation.create({
          id: operationId,
          orgId: principal.orgId,
          type: action.type,
          vmId: server.id,
          deploymentId: located.deploymentId,
          steps: TEMPLATE_STEPS[action.type as keyof typeof TEMPLATE_STEPS].map((name) => ({ name, status: 'pending' as const })),
          params: planned.params,
          createdAt: this.clock.now(),
        });
        await this.operations.create(operation);
        if (planned.audit) {
          await this.audit.record({
            orgId: principal.orgId,
            ...auditActor(principal),
            action: action.type === 'template.deploy' ? 'deployment.create' : action.type === 'template.update' ? 'deployment.update' : 'deployment.remove',
            targetId: located.deploymentId,
            targetType: 'deployment',
            ipAddress: ip,
            data: { operation_id: operation.id, ...planned.audit },
          });
        }
        if (this.health.isDown()) throw providerUnavailable();
        const deployment = await this.deployments.findInOrg(principal.orgId, located.deploymentId);
        return { deployment: deployment!, operation };
      });
    } catch (err) {
      if (serverId !== undefined && isServerBusyViolation(err)) {
        const busy = await this.deployments.unfinishedServerOperation(serverId);
        throw busy ? serverBusy(serverId, busy) : invalidState(`Server ${serverId} already has an operation pending or running; wait for it to end`);
      }
      throw err;
    }
  }
}

/**
 * POST /v1/servers/{id}/deployments {template, version?, variables?}: 400 (version not offered,
 * unknown variable, required one missing or empty, a secret equal to "[redacted]"), 404 server,
 * template; 409 invalid_state (an unfinished operation, the server not running), conflict (the
 * template is on the server, not removed), quota_exceeded (10 not removed per server); 503.
 */
@Injectable()
export class DeployTemplate {
  constructor(
    private readonly runner: DeploymentActionRunner,
    private readonly catalog: TemplateCatalog,
    private readonly deployments: DeploymentRepository,
    private readonly secrets: DeploymentSecrets,
    private readonly clock: Clock,
  ) {}

  async execute(
    principal: Principal,
    input: { serverId: string; template: string; version?: string; variables?: Record<string, unknown> },
    ip: string | null,
  ): Promise<DeploymentActionResult> {
    const deploymentId = newId('dep');
    let template: Template | undefined;
    let version = '';
    let variables = { shown: {}, secrets: {} } as ReturnType<typeof resolveVariables>;
    return this.runner.run(principal, ip, {
      type: 'template.deploy',
      locate: async () => {
        template = await this.catalog.find(input.template);
        // The request's 400s that the template decides come before any 404 (the global check order).
        if (template) {
          version = resolveVersion(template, input.version);
          variables = resolveVariables(template, input.variables, undefined, false);
        }
        return { serverId: input.serverId, deploymentId };
      },
      check: async (server) => {
        if (!template) throw notFound(`Template ${input.template} not found`);
        const existing = await this.deployments.liveOnServer(server.id, template.id);
        if (existing) throw new DomainError('conflict', `Template ${template.id} is on server ${server.id} already (${existing})`, { existing_id: existing });
        const live = await this.deployments.countLiveOnServer(server.id);
        if (live >= DEPLOYMENTS_PER_SERVER) {
          throw new DomainError('quota_exceeded', `Server ${server.id} holds ${DEPLOYMENTS_PER_SERVER} deployments that are not removed`, { limit: DEPLOYMENTS_PER_SERVER });
        }
      },
      apply: async () => {
        const t = template!;
        await this.deployments.insert({
          id: deploymentId,
          orgId: principal.orgId,
          serverId: input.serverId,
          template: t.id,
          version,
          status: 'deploying',
          health: 'unknown',
          healthCheckedAt: null,
          variables: variables.shown,
          secretsSealed: this.secrets.seal(deploymentId, variables.secrets),
          pendingVersion: null,
          pendingVariables: null,
          pendingSecretsSealed: null,
          createdAt: this.clock.now(),
          removedAt: null,
        });
        return {
          params: { template: t.id, version },
          audit: { server_id: input.serverId, template: t.id, version, variables: variables.shown },
        };
      },
    });
  }
}

/** The deployment of the path, read (404); it is locked after its server (lockAfterServer), the order every writer takes. */
async function findDeployment(deployments: DeploymentRepository, principal: Principal, id: string): Promise<Deployment> {
  const deployment = await deployments.findInOrg(principal.orgId, id);
  if (!deployment) throw notFound(`Deployment ${id} not found`);
  return deployment;
}

/** The deployment locked, once its server is (the server's lock decides its operations, so it is as read). */
async function lockAfterServer(deployments: DeploymentRepository, principal: Principal, id: string): Promise<Deployment> {
  const deployment = await deployments.lockInOrg(principal.orgId, id);
  if (!deployment) throw notFound(`Deployment ${id} not found`);
  return deployment;
}

const refuse = (d: Deployment, action: string, allowed: DeploymentStatus[]): DomainError =>
  invalidState(`Deployment ${d.id} is ${d.status}; ${action} needs it ${allowed.join(' or ')}`);

/**
 * POST /v1/deployments/{id}/update {version?, variables?} → template.update, from active or
 * failed; variables merge (a member replaces, null unsets an optional one, absent keeps); an
 * empty body re-applies all. The target is kept apart (pending) until the update succeeds;
 * health becomes unknown.
 */
@Injectable()
export class UpdateDeployment {
  constructor(
    private readonly runner: DeploymentActionRunner,
    private readonly catalog: TemplateCatalog,
    private readonly deployments: DeploymentRepository,
    private readonly secrets: DeploymentSecrets,
  ) {}

  execute(principal: Principal, input: { deploymentId: string; version?: string; variables?: Record<string, unknown> }, ip: string | null): Promise<DeploymentActionResult> {
    let deployment: Deployment | undefined;
    let version = '';
    let resolved = { shown: {}, secrets: {} } as ReturnType<typeof resolveVariables>;
    let secretsChanged = new Set<string>();
    let template: Template | undefined;
    const resolve = (d: Deployment): void => {
      const t = template!;
      version = input.version === undefined ? d.version : resolveVersion(t, input.version);
      resolved = resolveVariables(t, input.variables, { shown: d.variables, secrets: this.secrets.open(d.id, d.secretsSealed) }, true);
      secretsChanged = new Set(Object.keys(input.variables ?? {}).filter((name) => t.variables.find((v) => v.name === name)?.secret));
    };
    return this.runner.run(principal, ip, {
      type: 'template.update',
      locate: async () => {
        const d = await findDeployment(this.deployments, principal, input.deploymentId);
        template = await this.catalog.find(d.template);
        if (!template) throw notFound(`Template ${d.template} not found`);
        resolve(d);
        return { serverId: d.serverId, deploymentId: d.id };
      },
      check: async () => {
        const d = (deployment = await lockAfterServer(this.deployments, principal, input.deploymentId));
        resolve(d);
        if (d.status !== 'active' && d.status !== 'failed') throw refuse(d, 'an update', ['active', 'failed']);
      },
      apply: async () => {
        const d = deployment!;
        const change: DeploymentChange = {
          status: 'updating',
          health: 'unknown',
          healthCheckedAt: null,
          pendingVersion: version,
          pendingVariables: resolved.shown,
          pendingSecretsSealed: this.secrets.seal(d.id, resolved.secrets),
        };
        await this.deployments.apply(d.id, change);
        return {
          params: { version, from_version: d.version, from_status: d.status },
          audit: { server_id: d.serverId, ...changedMembers(d, version, resolved.shown, secretsChanged) },
        };
      },
    });
  }
}

/** POST /v1/deployments/{id}/health → template.health, from active; not audited (it changes nothing). */
@Injectable()
export class CheckDeploymentHealth {
  constructor(
    private readonly runner: DeploymentActionRunner,
    private readonly deployments: DeploymentRepository,
  ) {}

  execute(principal: Principal, input: { deploymentId: string }, ip: string | null): Promise<DeploymentActionResult> {
    let deployment: Deployment | undefined;
    return this.runner.run(principal, ip, {
      type: 'template.health',
      locate: async () => {
        const d = await findDeployment(this.deployments, principal, input.deploymentId);
        return { serverId: d.serverId, deploymentId: d.id };
      },
      check: async () => {
        deployment = await lockAfterServer(this.deployments, principal, input.deploymentId);
        if (deployment.status !== 'active') throw refuse(deployment!, 'a health check', ['active']);
      },
      apply: async () => ({ params: {}, audit: null }),
    });
  }
}

/** DELETE /v1/deployments/{id} → template.remove, from active or failed; `removing` at once. */
@Injectable()
export class RemoveDeployment {
  constructor(
    private readonly runner: DeploymentActionRunner,
    private readonly deployments: DeploymentRepository,
  ) {}

  execute(principal: Principal, input: { deploymentId: string }, ip: string | null): Promise<DeploymentActionResult> {
    let deployment: Deployment | undefined;
    return this.runner.run(principal, ip, {
      type: 'template.remove',
      locate: async () => {
        const d = await findDeployment(this.deployments, principal, input.deploymentId);
        return { serverId: d.serverId, deploymentId: d.id };
      },
      check: async () => {
        const d = (deployment = await lockAfterServer(this.deployments, principal, input.deploymentId));
        if (d.status !== 'active' && d.status !== 'failed') throw refuse(d, 'a removal', ['active', 'failed']);
      },
      apply: async () => {
        const d = deployment!;
        await this.deployments.apply(d.id, { status: 'removing' });
        return { params: { from_status: d.status }, audit: { server_id: d.serverId, template: d.template, version: d.version } };
      },
    });
  }
}

