import { Page, PageCursor } from '../../../shared/kernel/pagination/cursor';
import { Deployment, DeploymentHealth, DeploymentStatus } from '../domain/deployment';

/** The server as deployments see it. */
export interface DeploymentServer {
  id: string;
  status: string;
  deleted: boolean;
}

export interface DeploymentChange {
  version?: string;
  status?: DeploymentStatus;
  health?: DeploymentHealth;
  healthCheckedAt?: Date | null;
  variables?: Record<string, string>;
  secretsSealed?: string | null;
  pendingVersion?: string | null;
  pendingVariables?: Record<string, string> | null;
  pendingSecretsSealed?: string | null;
  removedAt?: Date | null;
}

export interface DeploymentListQuery {
  limit: number;
  after?: PageCursor;
  serverId?: string;
  /** Unset: every status but removed. */
  status?: DeploymentStatus;
}

/** The deployments table, and what acceptance reads beside it. */
export abstract class DeploymentRepository {
  /** The organization's server, locked (FOR UPDATE) until the transaction ends; undefined when not the organization's. */
  abstract lockServer(orgId: string, serverId: string): Promise<DeploymentServer | undefined>;
  /** Whether the server is the organization's (deleted ones too), without a lock. */
  abstract serverInOrg(orgId: string, serverId: string): Promise<boolean>;
  /** The id of the server's unfinished vm.* or template.* operation, if any. */
  abstract unfinishedServerOperation(serverId: string): Promise<string | undefined>;
  /** The server's deployment of the template that is not removed, if any. */
  abstract liveOnServer(serverId: string, templateId: string): Promise<string | undefined>;
  abstract countLiveOnServer(serverId: string): Promise<number>;
  /** A second live deployment of the template on the server: 409 conflict with details.existing_id (the unique index decides). */
  abstract insert(deployment: Deployment): Promise<void>;
  abstract findInOrg(orgId: string, id: string): Promise<Deployment | undefined>;
  /** Locked until the transaction ends. */
  abstract lockInOrg(orgId: string, id: string): Promise<Deployment | undefined>;
  /** Newest first (created_at, id). */
  abstract list(orgId: string, query: DeploymentListQuery): Promise<Page<Deployment>>;
  abstract apply(id: string, change: DeploymentChange): Promise<void>;
}

/**
 * For the servers module: a deleted server's deployments become `removed` (servers.md). Run by
 * the vm.delete executor in its own transaction, when it records the server deleted.
 */
export abstract class TemplateDeployments {
  /** Every deployment of the server not removed yet becomes `removed` (removed_at now); their ids. */
  abstract removeAllForServer(serverId: string): Promise<string[]>;
}
