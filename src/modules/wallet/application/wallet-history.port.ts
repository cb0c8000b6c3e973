import { WalletTransaction, WalletTransactionCursor, WalletTransactionFilter } from '../domain/wallet-transaction';

/** Reads an organization's ledger, newest first by its position (`seq`). */
export abstract class WalletHistory {
  abstract list(
    orgId: string,
    filter: WalletTransactionFilter,
    limit: number,
    after: WalletTransactionCursor | undefined,
  ): Promise<{ items: WalletTransaction[]; next: WalletTransactionCursor | null }>;
}
