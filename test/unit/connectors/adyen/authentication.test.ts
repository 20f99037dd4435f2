// Adyen web 3-D Secure by redirect (issue 27, Checkout v72): the request fields and the mapping of
// action answers. Field names and enum values as the v72 spec gives them (ThreeDSRequestData.
// nativeThreeDS preferred|disabled, AuthenticationData.attemptAuthentication always|never,
// PaymentRequest.channel Web, CheckoutRedirectAction {type: redirect, url, method, data}).
import { describe, expect, it } from 'vitest';
import { paymentOutcome } from '../../../../src/connectors/adyen/status-map.ts';
import { authenticationFields } from '../../../../src/connectors/adyen/transformers.ts';
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
});
