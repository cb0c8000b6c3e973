import Stripe from 'stripe';
import { stripeSignatureHeader, verifyStripeSignature } from '../../../src/modules/funding/domain/stripe-signature';

/** The worked example of the payment events' signature: the body is the first four lines joined. */
const SECRET = 'whsec_simulated_docs_example_secret';
const T = 1767225600;
const BODY = Buffer.from(
  [
    '{"id":"evt_sim_A1b2C3d4E5f6G7h8I9j0K1l2","object":"event","type":"checkout.session.completed",',
    '"created":1767225600,"data":{"object":{"id":"cs_sim_Q1w2E3r4T5y6U7i8O9p0A1s2","object":',
    '"checkout.session","client_reference_id":"tu_Z9y8X7w6V5u4T3s2R1q0P9o8","amount_total":2500,',
    '"currency":"usd","payment_status":"paid","status":"complete"}}}',
  ].join(''),
  'utf8',
);
const HEADER = 't=1767225600,v1=a2566383c8650914a50a0ce1d87e908f04392cd50d21d559c8bd690590633ed0';

describe('Stripe-Signature', () => {
  it('signs the worked example to the documented header', () => {
    expect(stripeSignatureHeader(SECRET, T, BODY)).toBe(HEADER);
  });

  it('verifies it at t and up to 300 s either side, not beyond', () => {
    expect(verifyStripeSignature(HEADER, BODY, SECRET, T)).toBe(true);
    expect(verifyStripeSignature(HEADER, BODY, SECRET, T + 300)).toBe(true);
    expect(verifyStripeSignature(HEADER, BODY, SECRET, T - 300)).toBe(true);
    expect(verifyStripeSignature(HEADER, BODY, SECRET, T + 301)).toBe(false);
    expect(verifyStripeSignature(HEADER, BODY, SECRET, T - 301)).toBe(false);
  });

  it('any v1 may match; v0 and unknown keys never count; one t exactly', () => {
    const good = HEADER.split(',')[1];
    expect(verifyStripeSignature(`t=${T},v1=${'0'.repeat(64)},${good},x=y`, BODY, SECRET, T)).toBe(true);
    expect(verifyStripeSignature(`t=${T},v0=${good.slice(3)}`, BODY, SECRET, T)).toBe(false);
    expect(verifyStripeSignature(`t=${T},t=${T},${good}`, BODY, SECRET, T)).toBe(false);
    expect(verifyStripeSignature(good, BODY, SECRET, T)).toBe(false);
    expect(verifyStripeSignature(`t=${T},v1=${good.slice(3).toUpperCase()}`, BODY, SECRET, T)).toBe(false);
  });

  it('refuses another body, another secret, no header', () => {
    expect(verifyStripeSignature(HEADER, Buffer.concat([BODY, Buffer.from(' ')]), SECRET, T)).toBe(false);
    expect(verifyStripeSignature(HEADER, BODY, 'whsec_other', T)).toBe(false);
    expect(verifyStripeSignature(HEADER, BODY, SECRET.slice('whsec_'.length), T)).toBe(false);
    expect(verifyStripeSignature(undefined, BODY, SECRET, T)).toBe(false);
  });
});

describe("Stripe-Signature: this verifier and the stripe SDK's webhooks.constructEvent agree", () => {
  const good = HEADER.split(',')[1];
  const sdk = (header: string, body: Buffer, secret: string, nowS: number): boolean => {
    try {
      Stripe.webhooks.constructEvent(body, header, secret, 300, undefined, nowS * 1000);
      return true;
    } catch {
      return false;
    }
  };
  const sdkSigned = Stripe.webhooks.generateTestHeaderString({ payload: BODY.toString('utf8'), secret: SECRET, timestamp: T });

  // [case, header, body, secret, now]: each verifier gives the same answer.
  const cases: [string, string, Buffer, string, number][] = [
    ['the worked example', HEADER, BODY, SECRET, T],
    ["the SDK's own test header", sdkSigned, BODY, SECRET, T],
    ['300 s later', HEADER, BODY, SECRET, T + 300],
    ['301 s later', HEADER, BODY, SECRET, T + 301],
    ['a second v1 that matches', `t=${T},v1=${'0'.repeat(64)},${good}`, BODY, SECRET, T],
    ['a v0 only', `t=${T},v0=${good.slice(3)}`, BODY, SECRET, T],
    ['unknown keys beside it', `t=${T},${good},x=y,v0=abc`, BODY, SECRET, T],
    ['no t', good, BODY, SECRET, T],
    ['no v1', `t=${T}`, BODY, SECRET, T],
    ['upper-case hex', `t=${T},v1=${good.slice(3).toUpperCase()}`, BODY, SECRET, T],
    ['another body', HEADER, Buffer.concat([BODY, Buffer.from(' ')]), SECRET, T],
    ['another secret', HEADER, BODY, 'whsec_other', T],
    ['the secret without whsec_', HEADER, BODY, SECRET.slice('whsec_'.length), T],
    ['a t that is not a number', `t=abc,${good}`, BODY, SECRET, T],
    ['an empty header', '', BODY, SECRET, T],
  ];
  it.each(cases)('%s', (_name, header, body, secret, now) => {
    expect(sdk(header, body, secret, now)).toBe(verifyStripeSignature(header, body, secret, now));
  });

  it('agree on a signature made by either, and disagree only where funding.md is stricter (the Stripe adapter requires both)', () => {
    expect(sdkSigned).toBe(HEADER);
    const body = Buffer.from('{"id":"evt_1","type":"checkout.session.completed"}\n');
    expect(sdk(stripeSignatureHeader(SECRET, T, body), body, SECRET, T)).toBe(true);
    // A t more than 300 s ahead: Stripe's libraries accept it (they bound only the age); funding.md refuses the future too.
    expect([sdk(HEADER, BODY, SECRET, T - 301), verifyStripeSignature(HEADER, BODY, SECRET, T - 301)]).toEqual([true, false]);
    // Two t: the SDK takes the last; funding.md wants one exactly.
    expect([sdk(`t=1,t=${T},${good}`, BODY, SECRET, T), verifyStripeSignature(`t=1,t=${T},${good}`, BODY, SECRET, T)]).toEqual([true, false]);
  });
});
