import { Injectable } from '@nestjs/common';
import { notFound } from '../../../shared/kernel/errors/domain-error';
import { decodeCursor, encodeCursor, parseLimit } from '../../../shared/kernel/pagination/cursor';
import { Principal } from '../../auth/domain/principal';
import { Volume } from '../domain/volume';
import { VolumeRepository } from './volumes.port';

/** The caller's volumes: one by id (deleted ones included), or a page of those not deleted. */
@Injectable()
export class VolumeQueries {
  constructor(private readonly volumes: VolumeRepository) {}

  async get(principal: Principal, id: string): Promise<Volume> {
    const volume = await this.volumes.findInOrg(principal.orgId, id);
    if (!volume) throw notFound(`Volume ${id} not found`);
    return volume;
  }

  async list(principal: Principal, input: { limit?: string; cursor?: string }): Promise<{ volumes: Volume[]; nextCursor: string | null }> {
    const limit = parseLimit(input.limit);
    const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor);
    const page = await this.volumes.listInOrg(principal.orgId, { limit, after });
    return { volumes: page.items, nextCursor: page.next && encodeCursor(page.next) };
  }
}
