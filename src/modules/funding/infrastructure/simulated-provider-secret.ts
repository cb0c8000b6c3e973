import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Settings } from '../../../shared/config/settings';

/** The secret the simulated provider signs with: PAYMENT_PROVIDER_WEBHOOK_SECRET, or random per process. */
@Injectable()
export class SimulatedProviderSecret {
  readonly value: string;
  constructor(settings: Settings) {
    this.value = settings.paymentProviderWebhookSecret ?? `whsec_${randomBytes(24).toString('base64')}`;
  }
}
