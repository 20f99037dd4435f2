import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../../../src/routing/config-loader.ts';
import { select, stableFraction } from '../../../src/routing/select.ts';
import type { RoutingSnapshot } from '../../../src/routing/snapshot.ts';

const BASE = `
connectors:
  stripe_eu: { type: stripe, secret_key: sk, webhook_secrets: [whsec] }
  adyen_eu: { type: adyen, api_key: k, merchant_account: M, hmac_keys: ["AB12"], basic_auth: { username: u, password: p } }
  stripe_live: { type: stripe, endpoint: "https://api.stripe.com", secret_key: sk, webhook_secrets: [whsec] }
routing:
  rules:
    - name: eur-large
      when: { currency: [EUR], amount: { gte: 100000 } }
      priority: [adyen_eu, stripe_eu]
    - name: de-visa
      when: { country: [DE], brand: [visa] }
      priority: [stripe_eu]
    - name: vip
      when: { merchant: [mer_vip], metadata: { tier: gold } }
      priority: [adyen_eu]
    - name: usd-split
      when: { currency: [USD] }
      weighted: { stripe_eu: 70, adyen_eu: 30 }
    - name: gbp-live
      when: { currency: [GBP] }
      priority: [stripe_live, stripe_eu]
  default: { priority: [stripe_eu, adyen_eu] }
`;

function snapshot(text = BASE): RoutingSnapshot {
  const r = parseConfigText(text, 'test.yaml', {});
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.snapshot;
}

const facts = { paymentId: 'pay_1', amount: 1000, currency: 'EUR', merchantId: 'mer_1', testCard: '4242424242424242' };

describe('select', () => {
  it('first matching rule wins, in file order', () => {
    const s = snapshot();
    const r = select(s, { ...facts, amount: 150_000, country: 'DE', brand: 'visa' });
    expect(r.ok && r.decision.rule).toBe('eur-large');
    expect(r.ok && r.decision.candidates).toEqual(['adyen_eu', 'stripe_eu']);
    const r2 = select(s, { ...facts, country: 'DE', brand: 'VISA' });
    expect(r2.ok && r2.decision.rule).toBe('de-visa');
  });

  it('matches merchant and metadata; falls back to the default', () => {
    const s = snapshot();
    expect(select(s, { ...facts, merchantId: 'mer_vip', metadata: { tier: 'gold' } }).decision.rule).toBe('vip');
    expect(select(s, { ...facts, merchantId: 'mer_vip', metadata: { tier: 'silver' } }).decision.rule).toBe('default');
    expect(select(s, { ...facts, country: 'FR', brand: 'visa' }).decision.rule).toBe('default');
  });

  it('amount bounds are inclusive or exclusive as written', () => {
    const s = snapshot();
    expect(select(s, { ...facts, amount: 99_999 }).decision.rule).toBe('default');
    expect(select(s, { ...facts, amount: 100_000 }).decision.rule).toBe('eur-large');
  });

  it('skips a candidate without a token, with the reason', () => {
    const s = snapshot();
    const r = select(s, { paymentId: 'p', amount: 1, currency: 'EUR', merchantId: 'm', tokens: { adyen_eu: 'tok' } });
    expect(r.decision.candidates).toEqual(['adyen_eu']);
    expect(r.decision.skipped).toEqual([{ connector: 'stripe_eu', reason: 'no payment method token for this connector' }]);
    const none = select(s, { paymentId: 'p', amount: 1, currency: 'EUR', merchantId: 'm' });
    expect(none).toMatchObject({ ok: false, code: 'no_candidate' });
  });

  it("skips a connector whose provider's decimals cannot express the amount, with the reason, and fails over", () => {
    const s = snapshot(BASE.replace('default: { priority: [stripe_eu, adyen_eu] }', 'default: { priority: [adyen_eu, stripe_eu] }'));
    // IDR: 2 decimals in ISO and at Stripe, whole rupiah at Adyen.
    const odd = select(s, { ...facts, currency: 'IDR', amount: 1234550 });
    expect(odd.decision.candidates).toEqual(['stripe_eu']);
    expect(odd.decision.skipped).toEqual([{ connector: 'adyen_eu', reason: expect.stringContaining('cannot take this amount: 1234550 IDR (ISO minor units) cannot be sent to Adyen') as unknown }]);
    expect(select(s, { ...facts, currency: 'IDR', amount: 1234500 }).decision.candidates).toEqual(['adyen_eu', 'stripe_eu']);
    // MGA the other way round: zero-decimal at Stripe, two decimals at Adyen.
    expect(select(s, { ...facts, currency: 'MGA', amount: 1550 }).decision).toMatchObject({ candidates: ['adyen_eu'], skipped: [{ connector: 'stripe_eu' }] });
    expect(select(s, { ...facts, currency: 'KWD', amount: 12345 }).decision.candidates).toEqual(['adyen_eu']); // Stripe wants the last KWD digit 0
    const vipOnly = select(s, { ...facts, currency: 'CVE', amount: 12345, merchantId: 'mer_vip', metadata: { tier: 'gold' } });
    // No candidate can take the amount: the request's fault, named on `amount` (issue 43).
    expect(vipOnly).toMatchObject({ ok: false, code: 'amount_not_accepted', field: 'amount', decision: { rule: 'vip', candidates: [], skipped: [{ connector: 'adyen_eu' }] } });
  });

  it("skips a Stripe account above Stripe's maximum (8 digits), fails over to Adyen (no documented maximum), and refuses on `amount` when none is left", () => {
    const s = snapshot();
    const big = select(s, { ...facts, amount: 100_000_000, currency: 'CHF' });
    expect(big.decision.candidates).toEqual(['adyen_eu']);
    expect(big.decision.skipped).toEqual([{ connector: 'stripe_eu', reason: expect.stringContaining("above the provider's maximum") as unknown }]);
    expect(select(s, { ...facts, amount: 99_999_999, currency: 'CHF' }).decision.candidates).toEqual(['stripe_eu', 'adyen_eu']);
    const stripeOnly = snapshot(BASE.replace('default: { priority: [stripe_eu, adyen_eu] }', 'default: { priority: [stripe_eu] }'));
    const none = select(stripeOnly, { ...facts, amount: 100_000_000, currency: 'CHF' });
    expect(none).toMatchObject({ ok: false, code: 'amount_not_accepted', field: 'amount', message: expect.stringContaining("stripe_eu: 100000000 CHF is above the provider's maximum") as unknown });
  });

  it('tokens naming only accounts the config does not have: refused on payment_method.tokens, naming them', () => {
    const s = snapshot();
    const r = select(s, { paymentId: 'p', amount: 1, currency: 'EUR', merchantId: 'm', tokens: { stripe_us: 'pm_1', adyen_us: 'x' } });
    expect(r).toMatchObject({ ok: false, code: 'tokens_name_no_account', field: 'payment_method.tokens' });
    expect(!r.ok && r.message).toBe('tokens name no configured connector account (stripe_us, adyen_us); configured: adyen_eu, stripe_eu, stripe_live');
    // One configured account among them is enough: the unknown ones are ignored, routing decides.
    expect(select(s, { paymentId: 'p', amount: 1, currency: 'EUR', merchantId: 'm', tokens: { stripe_us: 'pm_1', stripe_eu: 'pm_2' } })).toMatchObject({ ok: true, decision: { candidates: ['stripe_eu'] } });
    // A configured account that is no candidate of the rule is a routing outcome, not the request's fault.
    expect(select(s, { paymentId: 'p', amount: 1, currency: 'GBP', merchantId: 'm', tokens: { adyen_eu: 'x' } })).toMatchObject({ ok: false, code: 'no_candidate', field: null });
  });

  it('refuses a test card when a candidate is live', () => {
    const r = select(snapshot(), { ...facts, currency: 'GBP' });
    expect(r).toMatchObject({ ok: false, code: 'test_card_not_allowed' });
  });

  it('weighted split is deterministic per payment id and within 2% over 10,000 ids', () => {
    const s = snapshot();
    let stripeFirst = 0;
    for (let i = 0; i < 10_000; i++) {
      const f = { ...facts, currency: 'USD', paymentId: `pay_${i}` };
      const a = select(s, f);
      const b = select(s, f);
      expect(a.decision.candidates).toEqual(b.decision.candidates);
      expect(a.decision.candidates).toHaveLength(2);
      if (a.decision.candidates[0] === 'stripe_eu') stripeFirst++;
    }
    expect(Math.abs(stripeFirst / 10_000 - 0.7)).toBeLessThan(0.02);
  });

  it('stableFraction is in [0, 1)', () => {
    for (let i = 0; i < 1000; i++) {
      const f = stableFraction(`p${i}`, 'r');
      expect(f).toBeGreaterThanOrEqual(0);
      expect(f).toBeLessThan(1);
    }
  });

  it('the snapshot version is a content hash: same content, same version; other content, other version', () => {
    expect(snapshot().version).toBe(snapshot().version);
    expect(snapshot(BASE.replace('gte: 100000', 'gte: 100001')).version).not.toBe(snapshot().version);
    // Secrets are not part of the snapshot: rotating a key does not change the routing version.
    expect(snapshot(BASE.replace('secret_key: sk,', 'secret_key: sk2,')).version).toBe(snapshot().version);
    expect(JSON.stringify(snapshot())).not.toContain('whsec');
  });
});
