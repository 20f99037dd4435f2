import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigHolder } from '../../../src/routing/config-holder.ts';
import { loadConfigFile, parseConfigText } from '../../../src/routing/config-loader.ts';
import { configJsonSchema } from '../../../src/routing/config-schema.ts';

const GOOD = `
connectors:
  stripe_eu: { type: stripe, secret_key: "\${STRIPE_KEY:-sk_default}", webhook_secrets: ["\${WHSEC}"] }
routing:
  default: { priority: [stripe_eu] }
`;

describe('config loading', () => {
  it('interpolates ${VAR} and ${VAR:-default} from the environment', () => {
    const r = parseConfigText(GOOD, 'f.yaml', { WHSEC: 'whsec_env' });
    expect(r.ok).toBe(true);
    if (r.ok) {
      const c = r.config.connectors.stripe_eu!;
      expect(c.type === 'stripe' && c.secret_key).toBe('sk_default');
      expect(c.type === 'stripe' && c.webhook_secrets).toEqual(['whsec_env']);
      expect(c.breaker.volume_threshold).toBe(10);
    }
  });

  it('names a missing variable with its path', () => {
    const r = parseConfigText(GOOD, 'f.yaml', {});
    expect(r).toMatchObject({ ok: false, problems: [{ path: 'connectors.stripe_eu.webhook_secrets.0', message: 'environment variable WHSEC is not set and has no default' }] });
  });

  it('reports every error with its path and reason', () => {
    const bad = `
connectors:
  stripe_eu: { type: stripe, secret_key: sk, webhook_secrets: [w], colour: blue }
  Bad-Name: { type: paypal }
routing:
  rules:
    - name: r1
      when: { currency: [EURO], amount: { gte: -1 } }
      priority: [nope]
    - name: r1
      when: {}
      priority: [stripe_eu]
      weighted: { stripe_eu: 1 }
  default: { priority: [stripe_eu] }
  max_attempts: 0
`;
    const r = parseConfigText(bad, 'bad.yaml', {});
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const paths = r.problems.map((p) => p.path);
    expect(paths).toEqual(expect.arrayContaining([
      'connectors.stripe_eu',
      'connectors.Bad-Name',
      'routing.rules.0.when.currency.0',
      'routing.rules.0.when.amount.gte',
      'routing.max_attempts',
    ]));
    expect(r.problems.find((p) => p.path === 'routing.rules.0.when.currency.0')!.message).toContain('ISO 4217');
  });

  it('checks references between rules and connectors', () => {
    const text = `
connectors:
  stripe_eu: { type: stripe, secret_key: sk, webhook_secrets: [w] }
routing:
  rules:
    - { name: a, when: {}, priority: [ghost] }
    - { name: a, when: {}, priority: [stripe_eu], weighted: { stripe_eu: 1 } }
  default: {}
`;
    const r = parseConfigText(text, 'x.yaml', {});
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems).toEqual(expect.arrayContaining([
      { path: 'routing.rules.0.priority.0', message: 'unknown connector account "ghost"' },
      { path: 'routing.rules.1.name', message: 'duplicate rule name "a"' },
      { path: 'routing.rules.1', message: 'needs exactly one of priority or weighted' },
      { path: 'routing.default', message: 'needs exactly one of priority or weighted' },
    ]));
  });

  it('says plainly when the file is missing or not YAML', () => {
    expect(loadConfigFile('/nonexistent/switchyard.yaml')).toMatchObject({ ok: false, problems: [{ message: 'config file /nonexistent/switchyard.yaml does not exist' }] });
    expect(parseConfigText('a: [', 'y.yaml', {})).toMatchObject({ ok: false, problems: [{ path: '(file)' }] });
  });

  it('the shipped config file is valid and matches the committed JSON schema', () => {
    expect(loadConfigFile('config/switchyard.yaml', {}).ok).toBe(true);
    const committed = JSON.parse(readFileSync('config/switchyard.schema.json', 'utf8')) as unknown;
    expect(committed).toEqual(configJsonSchema());
  });
});

describe('hot reload', () => {
  it('swaps atomically on a valid file and keeps the old snapshot on a bad one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sy-config-'));
    const file = join(dir, 'switchyard.yaml');
    writeFileSync(file, GOOD.replace('${WHSEC}', 'w1'));
    const lines: string[] = [];
    const holder = ConfigHolder.open(file, { log: (l) => lines.push(l) });
    if (!(holder instanceof ConfigHolder)) throw new Error('open failed');
    const v1 = holder.current().snapshot.version;
    const seen: string[] = [];
    holder.onChange((s) => seen.push(s.snapshot.version));

    writeFileSync(file, 'connectors: {}\nrouting: { default: { priority: [x] } }\n');
    const rejected = holder.reload();
    expect(rejected.kind).toBe('rejected');
    expect(holder.current().snapshot.version).toBe(v1);
    expect(lines.join('\n')).toContain(`still serving ${v1}`);

    writeFileSync(file, GOOD.replace('${WHSEC}', 'w1').replace('default: { priority: [stripe_eu] }', 'default: { weighted: { stripe_eu: 1 } }'));
    const swapped = holder.reload();
    expect(swapped).toMatchObject({ kind: 'swapped', from: v1 });
    expect(holder.current().snapshot.version).not.toBe(v1);
    expect(seen).toEqual([holder.current().snapshot.version]);
    expect(holder.reload().kind).toBe('unchanged');
    holder.close();
  });
});

describe('connector authentication timeout', () => {
  it('authentication.timeout is a duration per account, handed to the connector in ms; a non-duration is refused with its path', async () => {
    const { accountConfig } = await import('../../../src/app/connector-accounts.ts');
    const text = (t: string): string => `
connectors:
  stripe_eu: { type: stripe, secret_key: sk_test_x, webhook_secrets: [w], authentication: { timeout: "${t}" } }
routing:
  default: { priority: [stripe_eu] }
`;
    const r = parseConfigText(text('20s'), 'f.yaml', {});
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const account = r.config.connectors.stripe_eu!;
    expect(accountConfig(r.config, account, { host: '127.0.0.1', port: 1, protocol: 'http' }, true).authenticationTimeoutMs).toBe(20_000);
    const bad = parseConfigText(text('soon'), 'f.yaml', {});
    expect(bad).toMatchObject({ ok: false, problems: [{ path: 'connectors.stripe_eu.authentication.timeout' }] });
  });
});
