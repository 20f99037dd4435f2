// A live account never runs on a public sandbox secret (issue 42 §4): the shipped config with its
// endpoints switched to live URLs and one secret variable left unset, empty or set to the printed
// default fails `routes validate` naming that variable, and a hot reload to it keeps the old config;
// sandbox endpoints (in-process or loopback) still run on the defaults, so `npm start` on a fresh
// clone works with .env.example's empty variables.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateRoutesCommand } from '../../../src/cli/route-commands.ts';
import { ConfigHolder } from '../../../src/routing/config-holder.ts';
import { loadConfigFile, parseConfigText } from '../../../src/routing/config-loader.ts';
import { isSandboxEndpoint } from '../../../src/routing/snapshot.ts';

const SHIPPED = readFileSync('config/switchyard.yaml', 'utf8');
const ADYEN_PRINTED_HMAC = '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056';

/** The shipped file with both accounts pointed at the providers' live APIs. */
function liveConfig(): string {
  const text = SHIPPED
    .replace(/(stripe_eu:\n\s+type: stripe\n\s+)endpoint: sandbox\b/, '$1endpoint: "https://api.stripe.com"')
    .replace(/(adyen_eu:\n\s+type: adyen\n\s+)endpoint: sandbox\b/, '$1endpoint: "https://checkout-live.adyenpayments.com"');
  expect(text.match(/endpoint: sandbox/g)).toBeNull();
  return text;
}

/** Real-looking secrets for every variable the shipped config reads. */
const OWN = {
  STRIPE_SECRET_KEY: 'sk_live_51OwnKey0123456789abcdef',
  STRIPE_WEBHOOK_SECRET: 'whsec_own0123456789abcdef0123456789',
  ADYEN_API_KEY: 'AQEyhmfxOwnKey0123456789abcdef',
  ADYEN_HMAC_KEY: '0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF',
  ADYEN_WEBHOOK_USER: 'switchyard-live',
  ADYEN_WEBHOOK_PASSWORD: 'a-long-own-password-0123456789',
  ADYEN_REPORT_API_KEY: 'AQEyhmfxOwnReportUser0123456789',
} as const;

const SECRETS = [
  { variable: 'STRIPE_SECRET_KEY', path: 'connectors.stripe_eu.secret_key', shipped: 'sk_test_sandbox' },
  { variable: 'STRIPE_WEBHOOK_SECRET', path: 'connectors.stripe_eu.webhook_secrets.0', shipped: 'whsec_sandbox' },
  { variable: 'ADYEN_API_KEY', path: 'connectors.adyen_eu.api_key', shipped: 'sandbox' },
  { variable: 'ADYEN_HMAC_KEY', path: 'connectors.adyen_eu.hmac_keys.0', shipped: ADYEN_PRINTED_HMAC },
  { variable: 'ADYEN_WEBHOOK_PASSWORD', path: 'connectors.adyen_eu.basic_auth.password', shipped: 'sandbox' },
  { variable: 'ADYEN_REPORT_API_KEY', path: 'connectors.adyen_eu.report_api_key', shipped: 'sandbox_report' },
] as const;

function configFile(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'sy-live-secrets-')), 'switchyard.yaml');
  writeFileSync(file, text);
  return file;
}

describe('a live account on a public sandbox secret', () => {
  it('validates with every secret of its own', () => {
    expect(validateRoutesCommand(configFile(liveConfig()), { ...OWN })).toMatchObject({ ok: true });
  });

  describe.each(SECRETS)('$variable', ({ variable, path, shipped }) => {
    const file = configFile(liveConfig());
    it.each([
      ['unset', (env: Record<string, string>) => delete env[variable], 'is unset or empty, so the sandbox default applies'],
      ['empty', (env: Record<string, string>) => (env[variable] = ''), 'is unset or empty, so the sandbox default applies'],
      ['the printed default', (env: Record<string, string>) => (env[variable] = shipped), 'holds a public sandbox value'],
      ['the printed default in another case', (env: Record<string, string>) => (env[variable] = shipped.toLowerCase()), 'holds a public sandbox value'],
    ])('%s: routes validate fails naming the variable at its path', (_what, change, why) => {
      const env: Record<string, string> = { ...OWN };
      change(env);
      const r = validateRoutesCommand(file, env);
      expect(r.ok).toBe(false);
      // Only this secret: the others are the account's own.
      expect(r.text.split('\n')).toEqual([expect.stringContaining(`${file}: ${path}: account `)]);
      expect(r.text).toContain(`${variable} ${why}`);
      expect(r.text).toContain(`set ${variable}`);
    });

    it('a hot reload to it is rejected: the old config keeps serving, and the log names the variable', () => {
      const env: Record<string, string> = { ...OWN };
      const lines: string[] = [];
      const holder = ConfigHolder.open(file, { load: (f) => loadConfigFile(f, env), log: (l) => lines.push(l) });
      if (!(holder instanceof ConfigHolder)) throw new Error(`open failed: ${JSON.stringify(holder.problems)}`);
      const before = holder.current();
      // The file changes too, so a reload that went through would be a new snapshot.
      writeFileSync(file, liveConfig().replace('max_attempts: 3', 'max_attempts: 2'));
      env[variable] = '';
      try {
        const r = holder.reload();
        expect(r.kind).toBe('rejected');
        expect(r.kind === 'rejected' && r.problems.map((p) => p.path)).toEqual([path]);
        expect(holder.current()).toBe(before);
        expect(lines.join('\n')).toContain(`still serving ${before.snapshot.version}`);
        expect(lines.join('\n')).toContain(variable);
        env[variable] = OWN[variable];
        expect(holder.reload().kind).toBe('swapped');
      } finally {
        writeFileSync(file, liveConfig());
        holder.close();
      }
    });
  });

  it('a public value written in the file (no variable) is refused too, and an empty ${VAR:-} is named in the schema problem', () => {
    const text = `
connectors:
  stripe_live: { type: stripe, endpoint: "https://api.stripe.com", secret_key: sk_test_sandbox, webhook_secrets: ["\${WHSEC:-}"] }
routing:
  default: { priority: [stripe_live] }
`;
    const written = parseConfigText(text, 'f.yaml', { WHSEC: 'whsec_own0123456789' });
    expect(written.ok).toBe(false);
    expect(!written.ok && written.problems.map((p) => [p.path, p.message.includes('a public sandbox value written in the file')])).toEqual([['connectors.stripe_live.secret_key', true]]);
    const empty = parseConfigText(text.replace('sk_test_sandbox', 'sk_live_own0123456789'), 'f.yaml', {});
    expect(!empty.ok && empty.problems.map((p) => [p.path, p.message.includes('${WHSEC}, unset or empty')])).toEqual([['connectors.stripe_live.webhook_secrets.0', true]]);
  });

  it('a live Adyen account needs a report credential of its own (report downloads refuse the payments key); one, not both', () => {
    const without = liveConfig().replace(/\n\s+report_api_key: [^\n]*/, '');
    const r = parseConfigText(without, 'f.yaml', { ...OWN });
    expect(!r.ok && r.problems.map((p) => p.path)).toEqual(['connectors.adyen_eu.report_api_key']);
    expect(!r.ok && r.problems[0]!.message).toContain('Merchant Report Download role');
    const basic = without.replace('hmac_keys:', 'report_basic_auth: { username: report-user, password: "${ADYEN_REPORT_PASSWORD}" }\n    hmac_keys:');
    expect(parseConfigText(basic, 'f.yaml', { ...OWN, ADYEN_REPORT_PASSWORD: 'own-report-password-0123' }).ok).toBe(true);
    const publicPassword = parseConfigText(basic, 'f.yaml', { ...OWN, ADYEN_REPORT_PASSWORD: 'sandbox' });
    expect(!publicPassword.ok && publicPassword.problems.map((p) => p.path)).toEqual(['connectors.adyen_eu.report_basic_auth.password']);
    const both = liveConfig().replace('hmac_keys:', 'report_basic_auth: { username: u, password: own-report-password-0123 }\n    hmac_keys:');
    const twice = parseConfigText(both, 'f.yaml', { ...OWN });
    expect(!twice.ok && twice.problems.map((p) => p.path)).toEqual(['connectors.adyen_eu.report_basic_auth']);
    // A sandbox account may go without: it downloads with its payments key.
    expect(parseConfigText(SHIPPED.replace(/\n\s+report_api_key: [^\n]*/, ''), 'f.yaml', {}).ok).toBe(true);
  });

  it('every secret of every live account is named at once', () => {
    const r = validateRoutesCommand(configFile(liveConfig()), {});
    expect(r.ok).toBe(false);
    for (const s of SECRETS) expect(r.text).toContain(`${s.path}: account`);
    for (const s of SECRETS) expect(r.text).toContain(s.variable);
  });
});

describe('sandbox accounts keep the defaults', () => {
  it('the shipped config validates with no variable set, or with .env.example\'s empty ones', () => {
    expect(validateRoutesCommand('config/switchyard.yaml', {})).toMatchObject({ ok: true });
    const empty = Object.fromEntries(Object.keys(OWN).map((k) => [k, '']));
    expect(validateRoutesCommand('config/switchyard.yaml', empty)).toMatchObject({ ok: true });
  });

  it('a loopback endpoint (switchyard sandbox) is a sandbox; a name that only starts like one is not', () => {
    const loopback = SHIPPED.replace(/(stripe_eu:\n\s+type: stripe\n\s+)endpoint: sandbox\b/, '$1endpoint: "http://127.0.0.1:4242"');
    expect(parseConfigText(loopback, 'f.yaml', {}).ok).toBe(true);
    for (const e of ['sandbox', 'http://127.0.0.1:1', 'http://127.9.9.9', 'http://localhost:9', 'https://[::1]:9']) expect(isSandboxEndpoint(e), e).toBe(true);
    for (const e of ['https://api.stripe.com', 'https://127.0.0.1.example.com', 'http://127.attacker.example', 'http://10.0.0.1']) expect(isSandboxEndpoint(e), e).toBe(false);
    const lookalike = SHIPPED.replace(/(stripe_eu:\n\s+type: stripe\n\s+)endpoint: sandbox\b/, '$1endpoint: "https://127.0.0.1.example.com"');
    expect(parseConfigText(lookalike, 'f.yaml', {})).toMatchObject({ ok: false, problems: [{ path: 'connectors.stripe_eu.secret_key' }, { path: 'connectors.stripe_eu.webhook_secrets.0' }] });
  });
});
