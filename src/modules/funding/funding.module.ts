import { Module } from '@nestjs/common';
import { Settings } from '../../shared/config/settings';
import { AuditModule } from '../audit/audit.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { WalletModule } from '../wallet/wallet.module';
import { EventOutboxModule } from '../webhooks/event-outbox.module';
import { PaymentGateway } from './application/payment-gateway.port';
import { TopUpTransitions } from './application/top-up-transitions';
import { TopUpStore } from './application/top-ups.port';
import { CancelTopUp, CreateTopUp, ExpireTopUps, ReadTopUps, ReceivePaymentEvent } from './application/top-ups.use-cases';
import { SimulatedCheckout } from './infrastructure/simulated-checkout';
import { PublicBaseUrl } from './infrastructure/public-base-url';
import { SimulatedPaymentGateway } from './infrastructure/simulated-payment-gateway';
import { SimulatedProviderSecret } from './infrastructure/simulated-provider-secret';
import { SimulatedRefunds } from './infrastructure/simulated-refunds';
import { StripePaymentGateway } from './infrastructure/stripe-payment-gateway';
import { TypeOrmTopUpStore } from './infrastructure/typeorm-top-ups';
import { CheckoutController } from './interface/http/checkout.controller';
import { PaymentEventsController } from './interface/http/payment-events.controller';
import { TopUpsController } from './interface/http/top-ups.controller';
import { RefundSettlementJob, SimulatedEventRetryJob, TopUpExpiryJob } from './interface/jobs/top-up-jobs';
import { RefundOutcomes, RefundTopUp, SettlePendingRefunds } from './application/refund-top-up.use-cases';
import { RefundStore } from './application/refunds.port';
import { TypeOrmRefundStore } from './infrastructure/typeorm-refunds';

/** Wallet top-ups through a hosted checkout, the payment provider's callback, the simulated provider and Stripe Checkout. */
@Module({
  imports: [WalletModule, AuditModule, IdempotencyModule, EventOutboxModule],
  controllers: [TopUpsController, PaymentEventsController, CheckoutController],
  providers: [
    { provide: TopUpStore, useClass: TypeOrmTopUpStore },
    { provide: RefundStore, useClass: TypeOrmRefundStore },
    SimulatedRefunds,
    RefundOutcomes,
    RefundTopUp,
    SettlePendingRefunds,
    RefundSettlementJob,
    SimulatedProviderSecret,
    PublicBaseUrl,
    SimulatedPaymentGateway,
    StripePaymentGateway,
    // PAYMENT_PROVIDER names the adapter; `off` keeps the simulated one, which then refuses every call.
    {
      provide: PaymentGateway,
      inject: [Settings, SimulatedPaymentGateway, StripePaymentGateway],
      useFactory: (settings: Settings, simulated: SimulatedPaymentGateway, stripe: StripePaymentGateway) => (settings.paymentProvider === 'stripe' ? stripe : simulated),
    },
    SimulatedCheckout,
    TopUpTransitions,
    CreateTopUp,
    ReadTopUps,
    CancelTopUp,
    ReceivePaymentEvent,
    ExpireTopUps,
    TopUpExpiryJob,
    SimulatedEventRetryJob,
  ],
  exports: [TopUpStore, PaymentGateway, ExpireTopUps, SimulatedCheckout, SimulatedProviderSecret, RefundTopUp, SettlePendingRefunds],
})
export class FundingModule {}
