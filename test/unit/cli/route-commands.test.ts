// `routes explain` and `routes validate` as functions (issue 43): the decision's refusal is reported
// (the CLI exits 1 on it), amount 0 is refused as the API refuses it, metadata is matched and bad
// pairs refused, and a weighted rule shows its weights — the same whatever the random payment id —
// unless a payment id asks for that payment's draw. validate's warnings and --strict.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CliInputError } from '../../../src/cli/cli-input-error.ts';
import { explainRouteCommand, validateRoutesCommand } from '../../../src/cli/route-commands.ts';

const CONFIG = `
connectors:
  stripe_a: { type: stripe, endpoint: sandbox, secret_key: sk_test_a, webhook_secrets: [whsec_a] }
  stripe_b: { type: stripe, endpoint: sandbox, secret_key: sk_test_b, webhook_secrets: [whsec_b] }
routing:
  rules:
    - { name: gold, when: { metadata: { tier: gold, region: eu } }, priority: [stripe_b] }
    - { name: usd-split, when: { currency: [USD] }, weighted: { stripe_b: 1, stripe_a: 3 } }
    - { name: iqd, when: { currency: [IQD] }, priority: [stripe_a] }
  default: { priority: [stripe_a, stripe_b] }
`;

let file: string;
beforeAll(() => {
  file = join(mkdtempSync(join(tmpdir(), 'sy-route-commands-')), 'switchyard.yaml');
  writeFileSync(file, CONFIG);
});

const explain = (over: Record<string, unknown>) => explainRouteCommand(file, { amount: '1000', currency: 'EUR', ...over });

describe('routes explain', () => {
  it('a refusal is not ok (the command exits 1) and says why', () => {
    const r = explain({ currency: 'IQD' });
    expect(r.ok).toBe(false);
    expect(r.text).toMatch(/^rule iqd: candidates \(none\); skipped stripe_a \(cannot take this amount: .+\); snapshot rs_[0-9a-f]+; refused: no candidate connector can take 1000 IQD: stripe_a: .+$/);
    expect(explain({}).ok).toBe(true);
  });

  it('refuses amount 0 as the API does, and what is not an integer', () => {
    expect(() => explain({ amount: '0' })).toThrow(new CliInputError('--amount: amount must be at least 1 minor unit (the API refuses 0)'));
    expect(() => explain({ amount: '10.5' })).toThrow(CliInputError);
    expect(explain({ amount: '1' }).ok).toBe(true);
  });

  it('matches rules on metadata; a pair without = or a key given twice is refused', () => {
    expect(JSON.parse(explain({ metadata: ['tier=gold', 'region=eu'], json: true }).text)).toMatchObject({ rule: 'gold', candidates: ['stripe_b'] });
    expect(JSON.parse(explain({ metadata: ['tier=gold'], json: true }).text)).toMatchObject({ rule: 'default' });
    expect(JSON.parse(explain({ metadata: ['tier=gold', 'region=eu=west'], json: true }).text)).toMatchObject({ rule: 'default' });
    expect(() => explain({ metadata: ['tier'] })).toThrow(new CliInputError('--metadata "tier": must be key=value'));
    expect(() => explain({ metadata: ['=gold'] })).toThrow(CliInputError);
    expect(() => explain({ metadata: ['tier=a', 'tier=b'] })).toThrow(new CliInputError('--metadata: key "tier" given twice'));
  });

  it('a weighted rule shows its weights and its candidates heaviest first, the same every time', () => {
    const texts = new Set(Array.from({ length: 40 }, () => explain({ currency: 'USD' }).text));
    expect([...texts]).toEqual([expect.stringMatching(/^rule usd-split: weighted stripe_b 1 \(25%\), stripe_a 3 \(75%\): each payment tries one first by weight, then the others, heaviest first; candidates stripe_a, stripe_b; none skipped; snapshot rs_/)]);
    const json = JSON.parse(explain({ currency: 'USD', json: true }).text) as Record<string, unknown>;
    expect(json).toMatchObject({ rule: 'usd-split', weights: { stripe_a: 3, stripe_b: 1 }, candidates: ['stripe_a', 'stripe_b'] });
    expect(json).not.toHaveProperty('payment_id');
  });

  it('with a payment id, that payment\'s draw (both draws occur across ids)', () => {
    const firsts = new Set(Array.from({ length: 40 }, (_, i) => {
      const r = JSON.parse(explain({ currency: 'USD', paymentId: `pay_${i}`, json: true }).text) as { candidates: string[]; payment_id: string };
      expect(r.payment_id).toBe(`pay_${i}`);
      return r.candidates[0];
    }));
    expect(firsts).toEqual(new Set(['stripe_a', 'stripe_b']));
    expect(explain({ currency: 'USD', paymentId: 'pay_1' }).text).toMatch(/; drawn for pay_1: candidates stripe_[ab] -> stripe_[ab];/);
  });
});

describe('routes validate', () => {
  it('warns and stays valid; --strict refuses with every warning', () => {
    const lax = validateRoutesCommand(file, {});
    expect(lax.ok).toBe(true);
    expect(lax.text).toContain('1 warning(s)');
    expect(lax.warnings).toEqual([expect.stringMatching(new RegExp(`^${file}: warning: routing\\.rules\\.2\\.when\\.currency\\.0: rule "iqd" matches IQD`))]);
    const strict = validateRoutesCommand(file, {}, { strict: true });
    expect(strict.ok).toBe(false);
    expect(strict.text.split('\n')).toEqual([lax.warnings[0], `${file}: refused under --strict: 1 warning(s)`]);
  });
});
