import { Controller, HttpCode, Param, Post, Req } from '@nestjs/common';
import { ApiBody, ApiHeader, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { SkipThrottle } from '@nestjs/throttler';
import type { Request } from 'express';
import { OwnBodyReader } from '../../../../shared/http/body-parsing';
import { PayloadTooLargeError } from '../../../../shared/http/error-envelope';
import { ApiErrors, REQUEST_ID_HEADER } from '../../../../shared/http/openapi';
import { Public } from '../../../auth/interface/http/access.decorators';
import { ReceivePaymentEvent } from '../../application/top-ups.use-cases';
import { PaymentEventReceivedResponse } from './top-ups.openapi';

/**
 * The payment provider's callback: public (no bearer; the signature authenticates), not rate
 * limited, no Idempotency-Key (event ids deduplicate). The raw bytes come from
 * paymentEventsRawBody (at most 256 KiB), verified before any parsing.
 */
@ApiTags('Payment provider callbacks')
@Controller('v1/payment-events')
@Public()
@SkipThrottle()
@OwnBodyReader()
export class PaymentEventsController {
  constructor(private readonly receive: ReceivePaymentEvent) {}

  @Post(':provider')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'receivePaymentEvent',
    summary: "The payment provider's callback (webhook): checkout session events",
    description:
      'Called by the payment provider, not by API clients: no bearer token; the `Stripe-Signature` header (HMAC-SHA256 of `t.body` with the webhook secret, ' +
      'within 300 s of now) authenticates the raw body (at most 256 KiB). Each event id is applied once: a delivery seen before answers 200 and changes nothing. ' +
      'A paid event credits its top-up exactly once, even after it was canceled or expired. Register this URL at Stripe for the checkout.session.* events. ' +
      'Order: 404 (not the configured provider), 400 signature, 400 body, 200.',
  })
  @ApiParam({ name: 'provider', description: 'The configured provider (PAYMENT_PROVIDER): `stripe`, or `simulated`; any other is 404', example: 'stripe' })
  @ApiHeader({ name: 'Stripe-Signature', required: true, description: '`t=<unix seconds>,v1=<64 lowercase hex>`', example: 't=1767225600,v1=a2566383c8650914a50a0ce1d87e908f04392cd50d21d559c8bd690590633ed0' })
  @ApiBody({
    description: 'A Stripe-shaped event: `id`, `type`; for checkout.session.* also `data.object` with `id`, `client_reference_id`, `amount_total`, `currency`, `payment_status`',
    schema: { type: 'object', additionalProperties: true, required: ['id', 'type'], properties: { id: { type: 'string' }, type: { type: 'string' }, data: { type: 'object' } } },
  })
  @ApiOkResponse({ type: PaymentEventReceivedResponse, headers: REQUEST_ID_HEADER })
  @ApiErrors('not_found')
  async receiveEvent(@Param('provider') provider: string, @Req() req: Request): Promise<PaymentEventReceivedResponse> {
    if (req.paymentEventBodyTooLarge) throw new PayloadTooLargeError('256 KiB');
    await this.receive.receive(provider, req.paymentEventBody ?? Buffer.alloc(0), req.headers);
    return { received: true };
  }
}
