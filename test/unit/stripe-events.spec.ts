import { PaymentEventRefused } from '../../src/modules/funding/application/payment-gateway.port';
import { parseStripeEvent } from '../../src/modules/funding/infrastructure/stripe-events';

const event = (over: Record<string, unknown> = {}, object: Record<string, unknown> = {}) =>
  Buffer.from(
    JSON.stringify({
      id: 'evt_1',
      type: 'checkout.session.completed',
      data: { object: { id: 'cs_1', client_reference_id: 'tu_1', amount_total: 500, currency: 'usd', payment_status: 'paid', ...object } },
      ...over,
    }),
  );

const refusal = (body: Buffer, options = {}): { field: string; message: string } | undefined => {
  try {
    parseStripeEvent(body, options);
  } catch (err) {
    if (err instanceof PaymentEventRefused) return { field: err.field, message: err.message };
    throw err;
  }
  return undefined;
};

describe('parseStripeEvent: NUL characters (PostgreSQL text cannot hold them: a 500 the provider would retry forever)', () => {
  it('a well-formed event parses', () => {
    expect(parseStripeEvent(event())).toMatchObject({ eventId: 'evt_1', kind: 'paid', topUpId: 'tu_1', sessionId: 'cs_1' });
  });

  it.each([
    ['id', event({ id: 'evt_\u0000' })],
    ['type', event({ type: 'checkout.session.completed\u0000' })],
    ['type', event({ type: 'other\u0000' })],
    ['data.object.client_reference_id', event({}, { client_reference_id: 'tu_\u00001' })],
    ['data.object.id', event({}, { id: 'cs_\u0000' })],
    ['data.object.failure_code', event({ type: 'checkout.session.async_payment_failed' }, { failure_code: 'card\u0000' })],
  ])('a NUL in %s: 400 naming it', (field, body) => {
    expect(refusal(body)).toEqual({ field, message: `${field} must not contain NUL (\\u0000) characters` });
    expect(refusal(body, { foreignSessionsIgnored: true })).toEqual({ field, message: `${field} must not contain NUL (\\u0000) characters` });
  });
});
