import { Injectable } from '@nestjs/common';
import { notFound } from '../../../shared/kernel/errors/domain-error';
import { decodeCursor, encodeCursor, parseLimit } from '../../../shared/kernel/pagination/cursor';
import { Principal } from '../../auth/domain/principal';
import { Operation, OperationStatus } from '../domain/operation';
import { OperationRepository } from './operations.port';

/** The caller's view of operations: one by id, or a page of them, always within its organization. */
@Injectable()
export class OperationQueries {
  constructor(private readonly operations: OperationRepository) {}

  async get(principal: Principal, id: string): Promise<Operation> {
    const op = await this.operations.findInOrg(principal.orgId, id);
    if (!op) throw notFound(`Operation ${id} not found`);
    return op;
  }

  /** Newest first. `limit` (1–100, default 20) and `cursor` as sent; 400 naming the field when invalid. */
  async list(
    principal: Principal,
    input: { limit?: string; cursor?: string; volumeId?: string; status?: OperationStatus },
  ): Promise<{ operations: Operation[]; nextCursor: string | null }> {
    const limit = parseLimit(input.limit);
    const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor);
    const page = await this.operations.list(principal.orgId, { limit, after, volumeId: input.volumeId, status: input.status });
    return { operations: page.items, nextCursor: page.next && encodeCursor(page.next) };
  }
}
