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

describe('parseStripeEvent: refund events', () => {
  const refundObject = (over: Record<string, unknown> = {}) => ({
    id: 're_1',
    object: 'refund',
    amount: 1500,
    currency: 'usd',
    status: 'succeeded',
    metadata: { refund_id: 'rfd_1', top_up_id: 'tu_1' },
    ...over,
  });
  const body = (type: string, object: Record<string, unknown>) => Buffer.from(JSON.stringify({ id: 'evt_r', type, data: { object } }));

  it('charge.refunded lists the charge refunds, amounts in the service minor units, the top-up from the metadata', () => {
    const charge = { id: 'ch_1', object: 'charge', metadata: {}, refunds: { object: 'list', data: [refundObject(), refundObject({ id: 're_2', amount: 100, status: 'pending', metadata: {} })] } };
    expect(parseStripeEvent(body('charge.refunded', charge), { foreignSessionsIgnored: true })).toEqual({
      eventId: 'evt_r', type: 'charge.refunded', kind: 'refund', sessionId: null, topUpId: 'tu_1', amount: null, currency: null, failureReason: null,
      refunds: [
        { providerRefundId: 're_1', refundId: 'rfd_1', state: 'succeeded', amount: 1_500_000n, failureReason: null },
        { providerRefundId: 're_2', refundId: null, state: 'pending', amount: 100_000n, failureReason: null },
      ],
    });
  });

  it('charge.refunded without its refunds (newer API versions) names the top-up with no refunds; refund.failed and canceled are failed', () => {
    expect(parseStripeEvent(body('charge.refunded', { id: 'ch_1', metadata: { top_up_id: 'tu_9' } }))).toMatchObject({ kind: 'refund', topUpId: 'tu_9', refunds: [] });
    expect(parseStripeEvent(body('refund.failed', refundObject({ status: 'failed', failure_reason: 'expired_or_canceled_card' }))).refunds).toEqual([
      { providerRefundId: 're_1', refundId: 'rfd_1', state: 'failed', amount: 1_500_000n, failureReason: 'expired_or_canceled_card' },
    ]);
    expect(parseStripeEvent(body('refund.updated', refundObject({ status: 'canceled', currency: 'idr', amount: 5_000_000 }))).refunds).toEqual([
      { providerRefundId: 're_1', refundId: 'rfd_1', state: 'failed', amount: 50_000n, failureReason: 'canceled' },
    ]);
  });

  it('a refund of another integration (no ids of this service in its metadata) is other; a mistyped member is refused by name', () => {
    expect(parseStripeEvent(body('refund.updated', refundObject({ metadata: {} }))).kind).toBe('other');
    expect(refusal(body('refund.updated', refundObject({ amount: '1500' })))?.field).toBe('data.object.amount');
    expect(refusal(body('charge.refunded', { id: 'ch_1', refunds: { data: [refundObject({ id: 5 })] } }))?.field).toBe('data.object.refunds.data.0.id');
    expect(refusal(body('charge.refunded', { id: 'ch_1', refunds: 'x' }))?.field).toBe('data.object.refunds');
  });
});
