// The delivery limits an operator sets through the environment: options (tests, embedding) win
// over the environment, which wins over the defaults; a value that is not a positive integer stops the start.
import { describe, expect, it } from 'vitest';
import { webhookSettings } from '../../../src/webhooks/webhook-services.ts';

describe('webhook delivery limits', () => {
  it('defaults: 4 per endpoint and 16 per merchant in flight fleet-wide, 16 endpoints per merchant; the lease follows the timeout', () => {
    const s = webhookSettings();
    expect([s.perEndpointInFlight, s.perMerchantInFlight, s.maxEndpointsPerMerchant, s.deliveryLeaseMs]).toEqual([4, 16, 16, 15_000]);
    expect(webhookSettings({ deliveryTimeoutMs: 1_000 }).deliveryLeaseMs).toBe(6_000);
  });

  it('reads the environment, under explicit options', () => {
    const env = { SWITCHYARD_WEBHOOK_MAX_ENDPOINTS: '5', SWITCHYARD_WEBHOOK_ENDPOINT_IN_FLIGHT: '2', SWITCHYARD_WEBHOOK_MERCHANT_IN_FLIGHT: '8' };
    const s = webhookSettings({}, env);
    expect([s.maxEndpointsPerMerchant, s.perEndpointInFlight, s.perMerchantInFlight]).toEqual([5, 2, 8]);
    expect(webhookSettings({ maxEndpointsPerMerchant: 3 }, env).maxEndpointsPerMerchant).toBe(3);
  });

  it.each(['0', '-1', '2.5', 'many', '1e3'])('refuses %s', (v) => {
    expect(() => webhookSettings({}, { SWITCHYARD_WEBHOOK_MAX_ENDPOINTS: v })).toThrow(/SWITCHYARD_WEBHOOK_MAX_ENDPOINTS must be a positive integer/);
  });
});
