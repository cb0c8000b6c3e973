import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiAuthenticated, ApiErrors, RATE_LIMITED_RESPONSE_HEADERS } from '../../../../shared/http/openapi';
import type { Principal } from '../../../auth/domain/principal';
import { ANY_ROLE } from '../../../auth/domain/principal';
import { CurrentPrincipal, RequireAccess } from '../../../auth/interface/http/access.decorators';
import { GetWalletBalances } from '../../application/get-wallet-balances.use-case';
import { ListWalletTransactions } from '../../application/list-wallet-transactions.use-case';
import { WalletTransaction } from '../../domain/wallet-transaction';
import { presentWalletTransaction as presentWalletTransactionJson } from '../../domain/wallet-transaction-json';
import { WalletResponse, WalletTransactionPageResponse, WalletTransactionResponse, WalletTransactionsQueryDto } from './wallet.openapi';

export function presentWalletTransaction(t: WalletTransaction): WalletTransactionResponse {
  return presentWalletTransactionJson(t);
}

@ApiTags('Wallet')
@Controller('v1/wallet')
export class WalletController {
  constructor(
    private readonly getBalances: GetWalletBalances,
    private readonly listTransactions: ListWalletTransactions,
  ) {}

  /** The organization's balance in each currency: available to spend, and reserved by pending operations. */
  @Get()
  @RequireAccess({ anyScope: ['billing:read', 'vm:read'], roles: ANY_ROLE })
  @ApiAuthenticated()
  @ApiOperation({ operationId: 'getWallet', summary: "The organization's balance in each currency", description: 'API key scope billing:read or vm:read, or any member with a session.' })
  @ApiOkResponse({ description: 'The balances', type: WalletResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('unauthorized', 'forbidden', 'rate_limited')
  async get(@CurrentPrincipal() principal: Principal): Promise<WalletResponse> {
    const balances = await this.getBalances.execute(principal);
    return {
      balances: balances.map((b) => ({ currency: b.currency, available: b.available.format(), reserved: b.reserved.format() })),
    };
  }

  /** Every movement of the organization's money, newest first, as a bank statement shows it. */
  @Get('transactions')
  @RequireAccess({ anyScope: ['billing:read', 'vm:read'], roles: ANY_ROLE })
  @ApiAuthenticated()
  @ApiOperation({
    operationId: 'listWalletTransactions',
    summary: "The wallet's history, newest first",
    description:
      'API key scope billing:read or vm:read, or any member with a session. One entry per movement (credit, hold, capture, release) with the balance of its ' +
      'currency right after it. Filters: currency, type, since (inclusive), until (exclusive), operation_id, top_up_id. Cursor pagination (limit 1-100, default 20) ' +
      'that never repeats or skips an entry while new ones are written.',
  })
  @ApiOkResponse({ type: WalletTransactionPageResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'unauthorized', 'forbidden', 'rate_limited')
  async transactions(@CurrentPrincipal() principal: Principal, @Query() query: WalletTransactionsQueryDto): Promise<WalletTransactionPageResponse> {
    const page = await this.listTransactions.execute(principal, query);
    return { transactions: page.transactions.map(presentWalletTransaction), next_cursor: page.nextCursor };
  }
}
