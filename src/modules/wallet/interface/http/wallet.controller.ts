import { Controller, Get } from '@nestjs/common';
import type { Principal } from '../../../auth/domain/principal';
import { ANY_ROLE } from '../../../auth/domain/principal';
import { CurrentPrincipal, RequireAccess } from '../../../auth/interface/http/access.decorators';
import { WalletLedger } from '../../application/wallet.port';

@Controller('v1/wallet')
export class WalletController {
  constructor(private readonly wallet: WalletLedger) {}

  /** The organization's balance in each currency: available to spend, and reserved by pending operations. */
  @Get()
  @RequireAccess({ scope: 'vm:read', roles: ANY_ROLE })
  async get(@CurrentPrincipal() principal: Principal) {
    const balances = await this.wallet.balances(principal.orgId);
    return {
      balances: balances.map((b) => ({ currency: b.currency, available: b.available.format(), reserved: b.reserved.format() })),
    };
  }
}
