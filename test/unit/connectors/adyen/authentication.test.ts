// Adyen web 3-D Secure by redirect (issue 27, Checkout v72): the request fields and the mapping of
// action answers. Field names and enum values as the v72 spec gives them (ThreeDSRequestData.
// nativeThreeDS preferred|disabled, AuthenticationData.attemptAuthentication always|never,
// PaymentRequest.channel Web, CheckoutRedirectAction {type: redirect, url, method, data}).
import { describe, expect, it } from 'vitest';
import { paymentOutcome } from '../../../../src/connectors/adyen/status-map.ts';
import { authenticationFields, resolvePaymentMethod } from '../../../../src/connectors/adyen/transformers.ts';
import type { AuthorizeRequest, AuthenticationRequest } from '../../../../src/connectors/contract.ts';

const auth = (over: Partial<AuthenticationRequest> = {}): AuthenticationRequest => ({
  mode: 'automatic', forced: false, returnUrl: 'https://gw.example/authenticate/att_1/return', origin: 'https://shop.example',
  browserInfo: { userAgent: 'UA', acceptHeader: 'text/html', language: 'nl-NL', colorDepth: 24, screenHeight: 800, screenWidth: 1200, timeZoneOffset: -60, javaEnabled: false, javaScriptEnabled: true },
  shopperIp: '192.0.2.10', ...over,
});
const req = (a?: AuthenticationRequest): AuthorizeRequest => ({
  paymentId: 'pay_1', attemptId: 'att_1', amount: 1000, currency: 'EUR', captureMethod: 'manual', paymentMethod: {}, idempotencyKey: 'k', providerRef: null,
  ...(a === undefined ? {} : { authentication: a }),
});
const asked = { amount: 1000, currency: 'EUR', reference: 'att_1' };

describe('Adyen customer authentication', () => {
  it('asks for redirect-based 3-D Secure with the shopper\'s browser', () => {
    expect(authenticationFields(req(auth()))).toEqual({
      authenticationData: { threeDSRequestData: { nativeThreeDS: 'disabled' } },
      channel: 'Web',
      origin: 'https://shop.example',
      browserInfo: { userAgent: 'UA', acceptHeader: 'text/html', language: 'nl-NL', colorDepth: 24, screenHeight: 800, screenWidth: 1200, timeZoneOffset: -60, javaEnabled: false, javaScriptEnabled: true },
      shopperIP: '192.0.2.10',
    });
    expect(authenticationFields(req(auth({ forced: true }))).authenticationData).toMatchObject({ attemptAuthentication: 'always' });
    expect(authenticationFields(req(auth({ mode: 'challenge' }))).authenticationData).toMatchObject({ attemptAuthentication: 'always' });
  });

  it('never asks when authentication is none or no customer can come back', () => {
    expect(authenticationFields(req(auth({ mode: 'none' })))).toEqual({ authenticationData: { attemptAuthentication: 'never' } });
    expect(authenticationFields(req(auth({ returnUrl: null })))).toEqual({ authenticationData: { attemptAuthentication: 'never' } });
    expect(authenticationFields(req())).toEqual({});
  });

  it('maps a redirect action (GET, or POST with data) and leaves a threeDS2 action without one', () => {
    expect(paymentOutcome({ resultCode: 'RedirectShopper', action: { type: 'redirect', url: 'https://issuer.example/3ds', method: 'GET' } }, asked, {})).toEqual({
      kind: 'action_required', action: 'redirect', redirect: { url: 'https://issuer.example/3ds', method: 'GET' },
    });
    expect(paymentOutcome({ pspReference: 'PSP1', resultCode: 'RedirectShopper', action: { type: 'redirect', url: 'https://issuer.example/acs', method: 'POST', data: { PaReq: 'x', MD: 'y', TermUrl: 'https://gw.example/r' } } }, asked, {})).toEqual({
      kind: 'action_required', providerRef: 'PSP1', action: 'redirect', redirect: { url: 'https://issuer.example/acs', method: 'POST', data: { PaReq: 'x', MD: 'y', TermUrl: 'https://gw.example/r' } },
    });
    expect(paymentOutcome({ pspReference: 'PSP2', resultCode: 'ChallengeShopper', action: { type: 'threeDS2' } }, asked, {})).toEqual({ kind: 'action_required', providerRef: 'PSP2', action: 'threeDS2' });
  });

  it('the gateway\'s 3-D Secure test cards reach the sandbox as their own numbers (no holder name asks for a challenge)', () => {
    const number = (testCard: string): unknown => {
      const r = resolvePaymentMethod({ testCard }, true);
      return r.ok ? (r.value.paymentMethod) : r.outcome;
    };
    expect(number('4000002760003184')).toMatchObject({ encryptedCardNumber: 'test_4000002760003184', holderName: 'Switchyard Test' });
    expect(number('4000008260003178')).toMatchObject({ encryptedCardNumber: 'test_4000008260003178', holderName: 'Switchyard Test' });
    expect(number('4242424242424242')).toMatchObject({ encryptedCardNumber: 'test_4111111111111111' });
  });
});
