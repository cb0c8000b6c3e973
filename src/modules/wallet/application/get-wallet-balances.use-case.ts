import { Injectable } from '@nestjs/common';
import { Principal } from '../../auth/domain/principal';
import { Balance, WalletLedger } from './wallet.port';

/** GET /v1/wallet: the caller's organization's balance in every currency (zero where never credited). */
@Injectable()
export class GetWalletBalances {
  constructor(private readonly wallet: WalletLedger) {}

  execute(principal: Principal): Promise<Balance[]> {
    return this.wallet.balances(principal.orgId);
  }
}
