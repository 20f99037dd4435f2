// `routes validate` warnings (issue 43): legal configs that are almost surely wrong. A rule after a
// catch-all (or after any rule matching all it matches) is never reached, an amount range can admit
// nothing, a rule can match a currency none of its candidates can take, and a decline-table row can
// be keyed by a code no connector produces (the shipped config had Adyen's "5" and "4").

import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../../../src/routing/config-loader.ts';
import { amountInterval, configWarnings, covers } from '../../../src/routing/config-warnings.ts';
import { ADYEN_DECLINE_CODES } from '../../../src/connectors/adyen/decline-codes.ts';
import { ADYEN_DEFAULT_DECLINES } from '../../../src/connectors/adyen/defaults.ts';
import { STRIPE_DECLINE_CODES } from '../../../src/connectors/stripe/decline-codes.ts';
import { STRIPE_DEFAULT_DECLINES } from '../../../src/connectors/stripe/defaults.ts';
import type { SwitchyardConfig } from '../../../src/routing/config-schema.ts';

const ACCOUNTS = `
connectors:
  stripe_eu: { type: stripe, secret_key: sk_test_a, webhook_secrets: [whsec_a] }
  adyen_eu: { type: adyen, api_key: sandbox, merchant_account: M, hmac_keys: ["44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056"], basic_auth: { username: u, password: sandbox } }
`;

function parsed(routing: string, declines = '{}', accounts = ACCOUNTS): SwitchyardConfig {
  const r = parseConfigText(`${accounts}\nrouting:\n${routing}\ndeclines: ${declines}\n`, 'x.yaml', {});
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.config;
}

const lines = (c: SwitchyardConfig): string[] => configWarnings(c).map((w) => `${w.path}: ${w.message}`);

describe('rules no payment reaches', () => {
  it('a rule after a catch-all, and the default behind it', () => {
    const c = parsed(`
  rules:
    - { name: everything, when: {}, priority: [stripe_eu] }
    - { name: eur, when: { currency: [EUR] }, priority: [adyen_eu] }
  default: { priority: [adyen_eu] }`);
    expect(lines(c)).toEqual([
      'routing.rules.1: rule "eur" is never reached: rule "everything" comes first, a catch-all that matches every payment',
      'routing.default: the default route is never used: rule "everything" matches every payment',
    ]);
  });

  it('a rule whose every payment an earlier, broader rule takes; a narrower earlier rule shadows nothing', () => {
    const c = parsed(`
  rules:
    - { name: eur-big, when: { currency: [EUR], amount: { gte: 1000 } }, priority: [adyen_eu] }
    - { name: eur-bigger-nl, when: { currency: [EUR], amount: { gt: 5000, lte: 9000 }, country: [NL] }, priority: [stripe_eu] }
    - { name: eur-usd, when: { currency: [EUR, USD] }, priority: [stripe_eu] }
    - { name: shop-a, when: { merchant: [mer_a], metadata: { tier: gold } }, priority: [stripe_eu] }
    - { name: shop-a-gold-gbp, when: { merchant: [mer_a], currency: [GBP], metadata: { tier: gold, x: y } }, priority: [adyen_eu] }
  default: { priority: [stripe_eu] }`);
    expect(lines(c)).toEqual([
      'routing.rules.1: rule "eur-bigger-nl" is never reached: rule "eur-big" comes first, which matches every payment this one matches',
      'routing.rules.4: rule "shop-a-gold-gbp" is never reached: rule "shop-a" comes first, which matches every payment this one matches',
    ]);
  });

  it('an amount range that admits nothing (contradictory, or below the 1 minor unit the API takes), and only that', () => {
    const c = parsed(`
  rules:
    - { name: upside-down, when: { amount: { gte: 5000, lte: 100 } }, priority: [stripe_eu] }
    - { name: open-both, when: { amount: { gt: 10, lt: 11 } }, priority: [stripe_eu] }
    - { name: zero, when: { amount: { lt: 1 } }, priority: [stripe_eu] }
    - { name: one, when: { amount: { lte: 1 } }, priority: [stripe_eu] }
  default: { priority: [stripe_eu] }`);
    expect(lines(c)).toEqual([
      'routing.rules.0.when.amount: rule "upside-down" matches no payment: its amount range (gte 5000, lte 100) admits no amount of at least 1 minor unit',
      'routing.rules.1.when.amount: rule "open-both" matches no payment: its amount range (gt 10, lt 11) admits no amount of at least 1 minor unit',
      'routing.rules.2.when.amount: rule "zero" matches no payment: its amount range (lt 1) admits no amount of at least 1 minor unit',
    ]);
    expect(amountInterval({ amount: { lte: 1 } })).toEqual({ lo: 1, hi: 1 });
    // An empty rule shadows nothing.
    expect(covers({ amount: { gte: 5, lte: 1 } }, { amount: { gte: 5, lte: 1 } })).toBe(false);
  });
});

describe('currencies a rule matches that none of its candidates can take', () => {
  it('per connector exponent tables: Stripe takes no IQD, Adyen does', () => {
    const c = parsed(`
  rules:
    - { name: iq-both, when: { currency: [IQD] }, weighted: { stripe_eu: 1, adyen_eu: 1 } }
    - { name: iq-stripe, when: { currency: [EUR, IQD] }, priority: [stripe_eu] }
  default: { priority: [stripe_eu] }`);
    const w = lines(c);
    expect(w).toHaveLength(1);
    expect(w[0]).toMatch(/^routing\.rules\.1\.when\.currency\.1: rule "iq-stripe" matches IQD, but none of its candidates can take IQD: stripe_eu \(.+\)$/);
  });
});

describe('decline-table rows that never apply', () => {
  it('a code no connector of the type produces (with what Adyen\'s own number means), a type without accounts, an unknown type', () => {
    const c = parsed('  default: { priority: [adyen_eu] }', `{ adyen: { "5": { class: hard }, blocked_card: { class: hard }, adyen_refusal_41: { class: hard }, insufficent_funds: { class: soft } }, strpe: { lost_card: { class: hard } } }`);
    expect(lines(c)).toEqual([
      'declines.adyen.5: no adyen connector produces decline code "5", so this row never applies (the table is keyed by the gateway\'s codes: adyen\'s "5" is "blocked_card")',
      'declines.adyen.insufficent_funds: no adyen connector produces decline code "insufficent_funds", so this row never applies',
      'declines.strpe: there is no connector type "strpe": these rows never apply',
    ]);
    const stripeOnly = `\nconnectors:\n  stripe_eu: { type: stripe, secret_key: sk_test_a, webhook_secrets: [whsec_a] }\n`;
    expect(lines(parsed('  default: { priority: [stripe_eu] }', '{ adyen: { blocked_card: { class: hard } } }', stripeOnly))).toEqual([
      'declines.adyen: no connector account is of type adyen: these rows never apply',
    ]);
  });

  it('every code the connectors ship defaults for is one they produce', () => {
    for (const code of Object.keys(STRIPE_DEFAULT_DECLINES)) expect(STRIPE_DECLINE_CODES.has(code), code).toBe(true);
    for (const code of Object.keys(ADYEN_DEFAULT_DECLINES)) expect(ADYEN_DECLINE_CODES.has(code), code).toBe(true);
  });

  it('the shipped config has no warning', () => {
    const r = parseConfigText(`${ACCOUNTS}\nrouting: { default: { priority: [stripe_eu] } }\n`, 'x.yaml', {});
    expect(r.ok && configWarnings(r.config)).toEqual([]);
  });
});
