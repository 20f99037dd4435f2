// What a customer's return from Stripe's page must carry to resume the attempt (issue 42 §1): the
// attempt's own PaymentIntent in payment_intent and a redirect_status. Nothing of it is kept: the
// resume retrieves the PaymentIntent, and the client secret is never read.
import { describe, expect, it } from 'vitest';
import { readStripeReturn } from '../../../../src/connectors/stripe/customer-return.ts';

const attempt = { providerRef: 'pi_3Mine' };
const back = { payment_intent: 'pi_3Mine', payment_intent_client_secret: 'pi_3Mine_secret_abc', redirect_status: 'succeeded' };

describe('readStripeReturn', () => {
  it('the attempt\'s PaymentIntent and a redirect_status: a return; nothing kept', () => {
    expect(readStripeReturn(back, attempt)).toEqual({ ok: true, keep: {} });
    expect(readStripeReturn({ ...back, redirect_status: 'failed' }, attempt)).toEqual({ ok: true, keep: {} });
  });

  it('no evidence, another PaymentIntent, or an attempt without one: no return', () => {
    expect(readStripeReturn({}, attempt)).toMatchObject({ ok: false });
    expect(readStripeReturn({ ...back, payment_intent: 'pi_3Other' }, attempt)).toMatchObject({ ok: false });
    const { redirect_status: _s, ...noStatus } = back;
    expect(readStripeReturn(noStatus, attempt)).toMatchObject({ ok: false });
    expect(readStripeReturn({ ...back, redirect_status: '<b>' }, attempt)).toMatchObject({ ok: false });
    expect(readStripeReturn(back, { providerRef: null })).toMatchObject({ ok: false });
  });
});
