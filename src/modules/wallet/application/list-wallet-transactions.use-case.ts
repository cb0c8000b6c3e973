import { Injectable } from '@nestjs/common';
import { Principal } from '../../auth/domain/principal';
import { parseLimit } from '../../../shared/kernel/pagination/cursor';
import {
  WalletTransaction,
  WalletTransactionQuery,
  decodeTransactionCursor,
  encodeTransactionCursor,
  parseTransactionFilter,
} from '../domain/wallet-transaction';
import { WalletHistory } from './wallet-history.port';

/** GET /v1/wallet/transactions: the caller's organization's ledger, newest first. */
@Injectable()
export class ListWalletTransactions {
  constructor(private readonly history: WalletHistory) {}

  async execute(
    principal: Principal,
    query: WalletTransactionQuery & { limit?: string; cursor?: string },
  ): Promise<{ transactions: WalletTransaction[]; nextCursor: string | null }> {
    const filter = parseTransactionFilter(query);
    const limit = parseLimit(query.limit);
    const after = query.cursor === undefined ? undefined : decodeTransactionCursor(query.cursor);
    const page = await this.history.list(principal.orgId, filter, limit, after);
    return { transactions: page.items, nextCursor: page.next && encodeTransactionCursor(page.next) };
  }
}
