import { Injectable } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { Settings } from '../../../../shared/config/settings';
import { PeriodicJob } from '../../../../shared/jobs/periodic-job';
import { SettlePendingRefunds } from '../../application/refund-top-up.use-cases';
import { ExpireTopUps } from '../../application/top-ups.use-cases';
import { SimulatedCheckout } from '../../infrastructure/simulated-checkout';

/** Worker processes: every TOP_UP_EXPIRY_SWEEP_MS, pending top-ups past their expiry are settled with the provider. */
@Injectable()
export class TopUpExpiryJob extends PeriodicJob {
  protected override readonly removed = 'top-ups ended';
  constructor(
    private readonly expire: ExpireTopUps,
    settings: Settings,
    scheduler: SchedulerRegistry,
  ) {
    super('TopUpExpiry', settings.topUpExpirySweepMs, settings, scheduler);
  }

  protected runOnce(stopping: () => boolean): Promise<number> {
    return this.expire.runOnce(stopping);
  }
}

/** Worker processes: the simulated provider retries its undelivered events (every second; each event on its own schedule). */
@Injectable()
export class SimulatedEventRetryJob extends PeriodicJob {
  protected override readonly removed = 'payment events delivered on retry';
  constructor(
    private readonly checkout: SimulatedCheckout,
    private readonly funding: Settings,
    scheduler: SchedulerRegistry,
  ) {
    super('SimulatedEventRetry', 1000, funding, scheduler);
  }

  protected runOnce(): Promise<number> {
    if (this.funding.paymentProvider !== 'simulated' || this.funding.paymentProviderDown) return Promise.resolve(0);
    return this.checkout.retryDue();
  }
}

/** Worker processes: every TOP_UP_EXPIRY_SWEEP_MS, pending refunds due for another look are settled with the provider (its truth read first). */
@Injectable()
export class RefundSettlementJob extends PeriodicJob {
  protected override readonly removed = 'refunds settled';
  constructor(
    private readonly settle: SettlePendingRefunds,
    settings: Settings,
    scheduler: SchedulerRegistry,
  ) {
    super('RefundSettlement', settings.topUpExpirySweepMs, settings, scheduler);
  }

  protected runOnce(stopping: () => boolean): Promise<number> {
    return this.settle.runOnce(stopping);
  }
}
