// Each provider's decimals through the whole gateway, against both in-process sandboxes: a payment
// in a currency whose Adyen decimals differ from ISO 4217 is charged the right amount there (the
// sandbox's ledger reads the value with Adyen's decimals), and an amount Adyen cannot express is
// routed past Adyen to Stripe, the skip and its reason on the payment.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxControl } from '../../../src/sandboxes/shared/control.ts';
import { settled, startTestGateway } from '../helpers/runtime.ts';
import type { TestGateway } from '../helpers/runtime.ts';

const CONFIG = `
connectors:
  adyen_eu:
    type: adyen
    endpoint: sandbox
    api_key: sandbox
    merchant_account: SwitchyardSandbox
    hmac_keys: ["44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056"]
    basic_auth: { username: switchyard, password: sandbox }
  stripe_eu:
    type: stripe
    endpoint: sandbox
    secret_key: sk_test_sandbox
    webhook_secrets: [whsec_sandbox]
routing:
  default: { priority: [adyen_eu, stripe_eu] }
  max_attempts: 3
`;

let gw: TestGateway;
let adyen: SandboxControl;
let stripe: SandboxControl;
const entry = async (sb: SandboxControl, attemptId: string) => (await sb.ledger()).find((e) => e.reference === attemptId);

beforeAll(async () => {
  gw = await startTestGateway('routing_currency_exponents', CONFIG);
  adyen = gw.rt.sandboxes.find((s) => s.account === 'adyen_eu')!;
  stripe = gw.rt.sandboxes.find((s) => s.account === 'stripe_eu')!;
});
afterAll(async () => gw?.close());

describe('provider decimals end to end', () => {
  it.each([
    ['IDR', 1234500, 12345, 0], // 12,345.00 rupiah: Adyen receives whole rupiah
    ['CLP', 5000, 500000, 2], // 5000 pesos: Adyen receives two decimals
    ['ISK', 2790, 279000, 2],
    ['CVE', 12300, 123, 0],
  ])('%s %i is authorized on Adyen for the same amount (value %i received with %i decimals)', async (currency, amount, value, decimals) => {
    const p = await gw.waitFor((await gw.pay({ amount, currency })).id, settled);
    expect(p.attempts.map((a) => [a.connector, a.status])).toEqual([['adyen_eu', 'authorized']]);
    expect(p.amountAuthorized).toBe(amount);
    expect(await entry(adyen, p.attempts[0]!.id)).toMatchObject({ currency, amount, authorized: amount, received: { decimals, amount: value, authorized: value } });
  });

  it('IDR 1234550 is no whole rupiah: Adyen is skipped with the reason and Stripe takes it', async () => {
    const p = await gw.waitFor((await gw.pay({ amount: 1234550, currency: 'IDR' })).id, settled);
    expect(p.routing.candidates).toEqual(['stripe_eu']);
    expect(p.routing.skipped).toEqual([{ connector: 'adyen_eu', reason: expect.stringContaining('1234550 IDR (ISO minor units) cannot be sent to Adyen, which takes IDR with 0 decimals') as unknown }]);
    expect(p.attempts.map((a) => [a.connector, a.status])).toEqual([['stripe_eu', 'authorized']]);
    expect(await entry(stripe, p.attempts[0]!.id)).toMatchObject({ authorized: 1234550 });
    expect((await adyen.ledger()).filter((e) => e.currency === 'IDR' && e.authorized === 1234550)).toHaveLength(0);
  });
});
