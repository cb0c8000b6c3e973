import { Injectable } from '@nestjs/common';
import { notFound } from '../../../shared/kernel/errors/domain-error';
import { decodeCursor, encodeCursor, parseLimit } from '../../../shared/kernel/pagination/cursor';
import { Principal } from '../../auth/domain/principal';
import { parseLabelSelector } from '../../prepaid/domain/labels';
import { Server, ServerStatus } from '../domain/server';
import { ServerReads } from './servers.port';

/** A page of GET /v1/servers holds 50 servers unless `limit` says otherwise (1 to 100). */
export const SERVER_PAGE_LIMIT = 50;

/** GET /v1/servers as sent (the HTTP layer has checked types, the status enum and the name rule). */
export interface ListServersInput {
  limit?: string;
  cursor?: string;
  status?: ServerStatus;
  region?: string;
  zone?: string;
  name?: string;
  /** `key=value`, once or repeated. */
  label?: string | string[];
  /** `true` or `false` (checked by the HTTP layer). */
  autoRenew?: string;
}

/** The caller's servers: one by id (deleted ones included), or a filtered page. */
@Injectable()
export class ServerQueries {
  constructor(private readonly servers: ServerReads) {}

  async get(principal: Principal, id: string): Promise<Server> {
    const server = await this.servers.findInOrg(principal.orgId, id);
    if (!server) throw notFound(`Server ${id} not found`);
    return server;
  }

  /**
   * Newest first; without `status` the servers not deleted. A cursor is a position in that
   * order: with other filters, the listing goes on after it under those filters.
   */
  async list(principal: Principal, input: ListServersInput): Promise<{ servers: Server[]; nextCursor: string | null }> {
    const limit = input.limit === undefined ? SERVER_PAGE_LIMIT : parseLimit(input.limit);
    const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor);
    const selectors = input.label === undefined ? [] : Array.isArray(input.label) ? input.label : [input.label];
    const page = await this.servers.listInOrg(principal.orgId, {
      limit,
      after,
      filter: { status: input.status, regionId: input.region, zoneId: input.zone, name: input.name, labels: selectors.map((s) => parseLabelSelector(s)),
        autoRenew: input.autoRenew === undefined ? undefined : input.autoRenew === 'true' },
    });
    return { servers: page.items, nextCursor: page.next && encodeCursor(page.next) };
  }
}
