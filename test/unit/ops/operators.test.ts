// Operator configuration from the environment: names and tokens checked once, one clear problem
// naming the variable and entry; the CLI's identity comes from SWITCHYARD_OPERATOR_TOKEN only.
import { describe, expect, it } from 'vitest';
import { cookiePolicyFromEnv } from '../../../src/ops/operator-auth.ts';
import { cliOperator, operatorsFromEnv, tokenFingerprint } from '../../../src/ops/operators.ts';
import { settingsFromEnv } from '../../../src/cli/settings.ts';

const T1 = 'a'.repeat(24);
const T2 = 'b'.repeat(30);

describe('operatorsFromEnv', () => {
  it('reads name:token pairs and the admin token as operator "admin"', () => {
    const r = operatorsFromEnv({ SWITCHYARD_OPERATORS: `alice:${T1}, bob.smith:${T2}`, SWITCHYARD_ADMIN_TOKEN: 'c'.repeat(24) });
    expect(r.ok && r.operators.names()).toEqual(['admin', 'alice', 'bob.smith']);
    expect(r.ok && r.operators.byToken(T2)?.name).toBe('bob.smith');
    expect(r.ok && r.operators.byToken(`${T2}x`)).toBeNull();
    expect(r.ok && r.operators.byToken(undefined)).toBeNull();
    expect(operatorsFromEnv({}).ok && operatorsFromEnv({}).ok).toBe(true);
  });

  it('says what is wrong, naming the entry', () => {
    const problem = (env: NodeJS.ProcessEnv) => {
      const r = operatorsFromEnv(env);
      return r.ok ? null : r.problem;
    };
    expect(problem({ SWITCHYARD_OPERATORS: `Alice:${T1}` })).toMatch(/^SWITCHYARD_OPERATORS entry 1: "Alice" is not an operator name/);
    expect(problem({ SWITCHYARD_OPERATORS: `alice:${T1},bob` })).toBe('SWITCHYARD_OPERATORS entry 2 (bob): give name:token');
    expect(problem({ SWITCHYARD_OPERATORS: 'alice:short' })).toMatch(/^SWITCHYARD_OPERATORS entry 1 \(alice\): the token must be at least 24 characters/);
    expect(problem({ SWITCHYARD_OPERATORS: `alice:${T1},alice:${T2}` })).toBe('SWITCHYARD_OPERATORS entry 2: operator "alice" is named twice');
    expect(problem({ SWITCHYARD_OPERATORS: `admin:${T1}`, SWITCHYARD_ADMIN_TOKEN: T2 })).toBe('SWITCHYARD_OPERATORS entry 1: operator "admin" is named twice (admin is SWITCHYARD_ADMIN_TOKEN)');
    expect(problem({ SWITCHYARD_OPERATORS: `alice:${T1},bob:${T1}` })).toBe("SWITCHYARD_OPERATORS entry 2 (bob): this token is already another operator's; each operator needs their own");
    expect(problem({ SWITCHYARD_ADMIN_TOKEN: 'short' })).toMatch(/^SWITCHYARD_ADMIN_TOKEN must be at least 24 characters/);
  });

  it('the CLI operator is whoever SWITCHYARD_OPERATOR_TOKEN belongs to, never a name given', () => {
    const env = { SWITCHYARD_OPERATORS: `alice:${T1},bob:${T2}` };
    expect(cliOperator({ ...env, SWITCHYARD_OPERATOR_TOKEN: T2 }).name).toBe('bob');
    expect(() => cliOperator(env)).toThrow(/set SWITCHYARD_OPERATOR_TOKEN to your operator token/);
    expect(() => cliOperator({ ...env, SWITCHYARD_OPERATOR_TOKEN: 'x'.repeat(24) })).toThrow(/is not the token of any operator/);
    expect(() => cliOperator({ SWITCHYARD_OPERATOR_TOKEN: T1 })).toThrow(/configure SWITCHYARD_OPERATORS/);
  });

  it('a token fingerprint changes with the token (sessions opened under the old one die)', () => {
    expect(tokenFingerprint({ name: 'alice', token: T1 })).not.toBe(tokenFingerprint({ name: 'alice', token: T2 }));
    expect(tokenFingerprint({ name: 'alice', token: T1 })).not.toContain(T1);
  });
});

describe('cookie and metrics settings', () => {
  it('parses the Secure rule and trusted proxies, refusing what is not an address', () => {
    expect(cookiePolicyFromEnv({})).toEqual({ secure: false, trustedProxies: [] });
    expect(cookiePolicyFromEnv({ SWITCHYARD_OPS_SECURE_COOKIE: 'true', SWITCHYARD_TRUSTED_PROXIES: '10.0.0.1, 192.168.0.0/16,::1' })).toEqual({ secure: true, trustedProxies: ['10.0.0.1', '192.168.0.0/16', '::1'] });
    expect(() => cookiePolicyFromEnv({ SWITCHYARD_OPS_SECURE_COOKIE: 'yes' })).toThrow('SWITCHYARD_OPS_SECURE_COOKIE=yes must be true or false');
    expect(() => cookiePolicyFromEnv({ SWITCHYARD_TRUSTED_PROXIES: 'proxy.local' })).toThrow('SWITCHYARD_TRUSTED_PROXIES: proxy.local is not an IP address or CIDR range');
    expect(() => cookiePolicyFromEnv({ SWITCHYARD_TRUSTED_PROXIES: '10.0.0.0/33' })).toThrow(/is not an IP address or CIDR range/);
  });

  it('reads the metrics port and token', () => {
    expect(settingsFromEnv({}).metrics).toEqual({ port: null, token: null });
    expect(settingsFromEnv({ SWITCHYARD_METRICS_PORT: '9464', SWITCHYARD_METRICS_TOKEN: T1 }).metrics).toEqual({ port: 9464, token: T1 });
    expect(() => settingsFromEnv({ SWITCHYARD_METRICS_TOKEN: 'short' })).toThrow(/SWITCHYARD_METRICS_TOKEN must be at least 24 characters/);
    expect(() => settingsFromEnv({ SWITCHYARD_METRICS_PORT: 'ninety' })).toThrow(/SWITCHYARD_METRICS_PORT ninety is not a port number/);
  });
});
