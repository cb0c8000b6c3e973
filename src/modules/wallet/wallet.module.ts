import { Module } from '@nestjs/common';
import { GetWalletBalances } from './application/get-wallet-balances.use-case';
import { WalletLedger } from './application/wallet.port';
import { TypeOrmWalletLedger } from './infrastructure/typeorm-wallet-ledger';
import { WalletController } from './interface/http/wallet.controller';

@Module({
  controllers: [WalletController],
  providers: [{ provide: WalletLedger, useClass: TypeOrmWalletLedger }, GetWalletBalances],
  exports: [WalletLedger],
})
export class WalletModule {}
