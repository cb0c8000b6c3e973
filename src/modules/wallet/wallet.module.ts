import { Module } from '@nestjs/common';
import { GetWalletBalances } from './application/get-wallet-balances.use-case';
import { ListWalletTransactions } from './application/list-wallet-transactions.use-case';
import { WalletHistory } from './application/wallet-history.port';
import { WalletLedger } from './application/wallet.port';
import { TypeOrmWalletHistory } from './infrastructure/typeorm-wallet-history';
import { TypeOrmWalletLedger } from './infrastructure/typeorm-wallet-ledger';
import { WalletController } from './interface/http/wallet.controller';

@Module({
  controllers: [WalletController],
  providers: [
    { provide: WalletLedger, useClass: TypeOrmWalletLedger },
    { provide: WalletHistory, useClass: TypeOrmWalletHistory },
    GetWalletBalances,
    ListWalletTransactions,
  ],
  exports: [WalletLedger],
})
export class WalletModule {}
