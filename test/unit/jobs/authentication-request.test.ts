// What the worker tells a connector about customer authentication (issue 27): the gateway's return
// endpoint for the attempt, with its return token (issue 42), only when the merchant gave a
// return_url and the gateway has a public URL, the step-up flag from the effect, and the
// shopper's browser and IP as the API stored them.
import { describe, expect, it } from 'vitest';
import { authenticationRequest } from '../../../src/jobs/call-executor.ts';
import type { ProviderCallEffect } from '../../../src/core/index.ts';
import { attemptToken } from '../../../src/resources/authentication-tokens.ts';
import { created } from '../core/fixtures.ts';

const KEY = Buffer.alloc(32, 7).toString('base64url');

const effect = (over: Partial<ProviderCallEffect> = {}): ProviderCallEffect => ({ type: 'provider_call', op: 'authorize', connector: 'stripe_a', attemptId: 'att_1', providerKey: 'k', amount: 1000, currency: 'EUR', ...over });

describe('authenticationRequest', () => {
  it('sends the return endpoint, origin, browser and IP when the customer can come back', () => {
    const p = created({ authentication: { mode: 'automatic', returnUrl: 'https://shop.example/done?x=1', gatewayUrl: 'https://pay.example', tokenKey: KEY } });
    const a = p.attempts[0]!;
    const shopper = {
      browser_info: { user_agent: 'UA', accept_header: '*/*', language: 'en', color_depth: 24, screen_height: 1, screen_width: 2, time_zone_offset: 0, java_enabled: false },
      shopper_ip: '192.0.2.1',
    };
    expect(authenticationRequest(p, a, effect({ forceAuthentication: true }), shopper)).toEqual({
      mode: 'automatic', forced: true, returnUrl: `https://pay.example/authenticate/${a.id}/return?token=${attemptToken(KEY, 'return', a.id)}`, origin: 'https://shop.example',
      browserInfo: { userAgent: 'UA', acceptHeader: '*/*', language: 'en', colorDepth: 24, screenHeight: 1, screenWidth: 2, timeZoneOffset: 0, javaEnabled: false },
      shopperIp: '192.0.2.1',
    });
  });

  it('the same return URL on every send: its token is derived from the payment\'s key, never drawn per call', () => {
    const p = created({ authentication: { mode: 'automatic', returnUrl: 'https://shop.example/done', gatewayUrl: 'https://pay.example', tokenKey: KEY } });
    const first = authenticationRequest(p, p.attempts[0]!, effect()).returnUrl;
    expect(first).toMatch(/\?token=[A-Za-z0-9_-]{43}$/);
    expect(authenticationRequest(p, p.attempts[0]!, effect()).returnUrl).toBe(first);
  });

  it('no return endpoint without a return_url, a gateway URL, a token key (a payment from before them), or with authentication none', () => {
    for (const authentication of [
      { mode: 'automatic' as const, returnUrl: null, gatewayUrl: 'https://pay.example', tokenKey: KEY },
      { mode: 'automatic' as const, returnUrl: 'https://shop.example/done', gatewayUrl: null, tokenKey: KEY },
      { mode: 'automatic' as const, returnUrl: 'https://shop.example/done', gatewayUrl: 'https://pay.example' },
      { mode: 'none' as const, returnUrl: 'https://shop.example/done', gatewayUrl: 'https://pay.example', tokenKey: KEY },
    ]) {
      const p = created({ authentication });
      expect(authenticationRequest(p, p.attempts[0]!, effect()).returnUrl).toBeNull();
    }
  });
});
