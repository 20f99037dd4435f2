// `switchyard routes validate|explain` as an operator runs them (issue 43): validate prints warnings
// and `--strict` exits 1 on them; explain exits 1 when the decision is a refusal, refuses amount 0
// as the API does, takes `--metadata k=v`, and shows a weighted rule's weights rather than one
// random draw (the details: test/unit/cli/route-commands.test.ts); an account whose written mode
// contradicts it fails validate and start (issue 47), and explain --mode skips the other mode's accounts. Real processes
// (bin/switchyard.js); no database.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';

let dir: string;
const file = (name: string, text: string): string => {
  const f = join(dir, name);
  writeFileSync(f, text);
  return f;
};

const CONFIG = `
connectors:
  stripe_a: { type: stripe, endpoint: sandbox, secret_key: sk_test_a, webhook_secrets: [whsec_a] }
  stripe_b: { type: stripe, endpoint: sandbox, secret_key: sk_test_b, webhook_secrets: [whsec_b] }
  stripe_live: { type: stripe, endpoint: "https://api.stripe.example", secret_key: sk_live_own0123456789, webhook_secrets: [whsec_own0123456789] }
routing:
  rules:
    - { name: gold, when: { metadata: { tier: gold } }, priority: [stripe_b] }
    - { name: usd-split, when: { currency: [USD] }, weighted: { stripe_a: 3, stripe_b: 1 } }
    - { name: live-only, when: { currency: [GBP] }, priority: [stripe_live] }
    - { name: iqd, when: { currency: [IQD] }, priority: [stripe_a] }
  default: { priority: [stripe_a, stripe_b] }
`;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sy-routes-cli-'));
});

describe('routes validate', () => {
  it('prints each warning and stays 0; --strict exits 1 naming them', async () => {
    const f = file('warn.yaml', CONFIG.replace('  default:', '    - { name: shadowed, when: { currency: [USD], amount: { gte: 100 } }, priority: [stripe_b] }\n  default:'));
    const lax = await runCli(['routes', 'validate', f], {});
    expect(lax.code).toBe(0);
    expect(lax.stdout).toContain('valid — routing snapshot');
    expect(lax.stdout).toContain('2 warning(s)');
    expect(lax.stderr).toContain(`${f}: warning: routing.rules.3.when.currency.0: rule "iqd" matches IQD, but none of its candidates can take IQD`);
    expect(lax.stderr).toContain(`${f}: warning: routing.rules.4: rule "shadowed" is never reached: rule "usd-split" comes first`);

    const strict = await runCli(['routes', 'validate', '--strict', f], {});
    expect(strict.code).toBe(1);
    expect(strict.stderr).toContain('rule "shadowed" is never reached');
    expect(strict.stderr).toContain(`${f}: refused under --strict: 2 warning(s)`);

    const clean = file('clean.yaml', CONFIG.replace(/ {4}- \{ name: iqd.*\n/, ''));
    expect(await runCli(['routes', 'validate', '--strict', clean], {})).toMatchObject({ code: 0, stderr: '' });
  });
});

describe('account modes (issue 47)', () => {
  // Written on the sandbox account: it contradicts what the account is, and start and validate both say so.
  const contradicted = () => file('modes.yaml', CONFIG.replace('secret_key: sk_test_a, webhook_secrets: [whsec_a] }', 'secret_key: sk_test_a, webhook_secrets: [whsec_a], mode: live }'));
  const message = 'connectors.stripe_a.mode: account stripe_a is a test account (its endpoint (sandbox) is a sandbox), so mode: live contradicts it';

  it('validate exits 1 naming the account whose mode contradicts it; a mode that agrees is valid', async () => {
    const f = contradicted();
    const r = await runCli(['routes', 'validate', f], {});
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${f}: ${message}`);
    const agreeing = file('agree.yaml', CONFIG.replace('whsec_own0123456789] }', 'whsec_own0123456789], mode: live }'));
    expect((await runCli(['routes', 'validate', agreeing], {})).code).toBe(0);
  });

  it('start refuses it before it listens', async () => {
    const r = await runCli(['start'], { SWITCHYARD_CONFIG: contradicted(), PORT: '0' }, 30_000);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(message);
    expect(r.stdout).not.toContain('listening');
  });

  it('explain --mode test skips the live account, saying why', async () => {
    const r = await runCli(['routes', 'explain', '--config', file('explain-modes.yaml', CONFIG), '--amount', '1000', '--currency', 'GBP', '--mode', 'test', '--json'], {});
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ rule: 'live-only', candidates: [], skipped: [{ connector: 'stripe_live', reason: 'a live account: a test key reaches only test accounts' }] });
  });
});

describe('routes explain', () => {
  const explain = async (...args: string[]) => runCli(['routes', 'explain', '--config', file('explain.yaml', CONFIG), ...args], {});

  it('exits 1 when the decision is a refusal, printing it whole', async () => {
    const live = await explain('--amount', '1000', '--currency', 'GBP', '--test-card', '4242424242424242');
    expect(live.code).toBe(1);
    expect(live.stdout).toContain('rule live-only');
    expect(live.stdout).toContain('refused: test_card is accepted only when every candidate connector is a sandbox');
    const none = await explain('--amount', '1000', '--currency', 'IQD', '--json');
    expect(none.code).toBe(1);
    expect(JSON.parse(none.stdout)).toMatchObject({ rule: 'iqd', candidates: [], refused: { code: 'amount_not_accepted' } });
    expect((await explain('--amount', '1000', '--currency', 'EUR')).code).toBe(0);
  });

  it('refuses amount 0 as the API does', async () => {
    const r = await explain('--amount', '0', '--currency', 'EUR');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('--amount: amount must be at least 1 minor unit');
  });

  it('takes --metadata k=v (repeatable) and shows a weighted rule\'s weights, not one draw', async () => {
    const gold = await explain('--amount', '1000', '--currency', 'EUR', '--metadata', 'tier=gold', '--metadata', 'shop=a=b', '--json');
    expect(gold.code).toBe(0);
    expect(JSON.parse(gold.stdout)).toMatchObject({ rule: 'gold', candidates: ['stripe_b'] });
    const split = await explain('--amount', '1000', '--currency', 'USD');
    expect(split.code).toBe(0);
    expect(split.stdout).toContain('rule usd-split: weighted stripe_a 3 (75%), stripe_b 1 (25%): each payment tries one first by weight');
  });
});
