import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiAuthenticated, ApiErrors, RATE_LIMITED_RESPONSE_HEADERS } from '../../../../shared/http/openapi';
import type { Principal } from '../../../auth/domain/principal';
import { ANY_ROLE } from '../../../auth/domain/principal';
import { CurrentPrincipal, RequireAccess } from '../../../auth/interface/http/access.decorators';
import { GetWalletBalances } from '../../application/get-wallet-balances.use-case';
import { WalletResponse } from './wallet.openapi';

@ApiTags('Wallet')
@Controller('v1/wallet')
export class WalletController {
  constructor(private readonly getBalances: GetWalletBalances) {}

  /** The organization's balance in each currency: available to spend, and reserved by pending operations. */
  @Get()
  @RequireAccess({ scope: 'vm:read', roles: ANY_ROLE })
  @ApiAuthenticated()
  @ApiOperation({ operationId: 'getWallet', summary: "The organization's balance in each currency", description: 'API key scope vm:read, or any member with a session.' })
  @ApiOkResponse({ description: 'The balances', type: WalletResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('unauthorized', 'forbidden', 'rate_limited')
  async get(@CurrentPrincipal() principal: Principal): Promise<WalletResponse> {
    const balances = await this.getBalances.execute(principal);
    return {
      balances: balances.map((b) => ({ currency: b.currency, available: b.available.format(), reserved: b.reserved.format() })),
    };
  }
}
