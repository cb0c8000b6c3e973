import { Injectable } from '@nestjs/common';
import { notFound } from '../../../shared/kernel/errors/domain-error';
import { decodeCursor, encodeCursor, parseLimit } from '../../../shared/kernel/pagination/cursor';
import { Principal } from '../../auth/domain/principal';
import { Deployment, DeploymentStatus } from '../domain/deployment';
import { Template } from '../domain/template';
import { DeploymentRepository } from './deployments.port';
import { TemplateCatalog } from './template-catalog.port';

/** A page of GET /v1/deployments holds 50 unless `limit` says otherwise (1 to 100). */
export const DEPLOYMENT_PAGE_LIMIT = 50;

/** GET /v1/templates, GET /v1/deployments, GET /v1/deployments/{id}. */
@Injectable()
export class TemplateQueries {
  constructor(
    private readonly catalog: TemplateCatalog,
    private readonly deployments: DeploymentRepository,
  ) {}

  templates(): Promise<Template[]> {
    return this.catalog.list();
  }

  async deployment(principal: Principal, id: string): Promise<Deployment> {
    const d = await this.deployments.findInOrg(principal.orgId, id);
    if (!d) throw notFound(`Deployment ${id} not found`);
    return d;
  }

  /** GET /v1/servers/{id}/deployments: the server's deployments as the list shows them; a server not the organization's is 404. */
  async listOfServer(
    principal: Principal,
    serverId: string,
    input: { limit?: string; cursor?: string; status?: DeploymentStatus },
  ): Promise<{ deployments: Deployment[]; nextCursor: string | null }> {
    const limit = input.limit === undefined ? DEPLOYMENT_PAGE_LIMIT : parseLimit(input.limit);
    const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor);
    if (!(await this.deployments.serverInOrg(principal.orgId, serverId))) throw notFound(`Server ${serverId} not found`);
    const page = await this.deployments.list(principal.orgId, { limit, after, serverId, status: input.status });
    return { deployments: page.items, nextCursor: page.next && encodeCursor(page.next) };
  }

  /** Newest first; without `status` every deployment but removed ones. */
  async list(
    principal: Principal,
    input: { limit?: string; cursor?: string; serverId?: string; status?: DeploymentStatus },
  ): Promise<{ deployments: Deployment[]; nextCursor: string | null }> {
    const limit = input.limit === undefined ? DEPLOYMENT_PAGE_LIMIT : parseLimit(input.limit);
    const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor);
    const page = await this.deployments.list(principal.orgId, { limit, after, serverId: input.serverId, status: input.status });
    return { deployments: page.items, nextCursor: page.next && encodeCursor(page.next) };
  }
}
