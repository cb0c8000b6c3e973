import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { OptionsModule } from '../options/options.module';
import { ServersModule } from '../servers/servers.module';
import { TemplateCatalogModule } from '../templates/templates.module';
import { VolumesModule } from '../volumes/volumes.module';
import { WalletModule } from '../wallet/wallet.module';
import { EventOutboxModule } from '../webhooks/event-outbox.module';
import { AdjustWallet } from './adjust-wallet.use-case';
import { CreditWallet } from './credit-wallet.use-case';
import { LoadSeed } from './load-seed.use-case';

/** Operator use cases (seed, wallet credit), driven by the CLI and the first-run demo seed. */
@Module({
  imports: [AuthModule, OptionsModule, ServersModule, VolumesModule, WalletModule, EventOutboxModule, TemplateCatalogModule],
  providers: [LoadSeed, CreditWallet, AdjustWallet],
  exports: [LoadSeed, CreditWallet, AdjustWallet],
})
export class OperatorModule {}
