// A connector account is in test or live mode, and the account itself says which: a sandbox is test;
// a Stripe account with a test-mode key (sk_test_/rk_test_) is test (Stripe's own test mode); an
// Adyen account on the TEST environment is test (Adyen's test platform); anything else reaches a
// provider's live platform and is live. A `mode` written in the config is a statement the operator
// makes about the account: one that contradicts the account is a config problem naming it, so
// `routes validate`, start and hot reload all refuse it (a test key must never reach a live account
// because a line in the file said it was a test one). "Sandbox" keeps its own meaning: only a sandbox
// takes the gateway's test cards (src/routing/select.ts).

import type { ConnectorAccountConfig, SwitchyardConfig } from './config-schema.ts';
import { isSandboxEndpoint } from './sandbox-endpoint.ts';

export const ACCOUNT_MODES = ['test', 'live'] as const;
export type AccountMode = (typeof ACCOUNT_MODES)[number];

export interface DerivedMode {
  readonly mode: AccountMode;
  /** Why, for the problem that names a contradiction. */
  readonly because: string;
}

const STRIPE_TEST_KEY = /^(sk|rk)_test_/;
const STRIPE_LIVE_KEY = /^(sk|rk)_live_/;

/** The Adyen environment an account runs on: as configured, else TEST for a sandbox and LIVE otherwise. */
export function adyenEnvironment(account: Extract<ConnectorAccountConfig, { type: 'adyen' }>): 'TEST' | 'LIVE' {
  return account.environment ?? (isSandboxEndpoint(account.endpoint) ? 'TEST' : 'LIVE');
}

/** The mode the account's own settings give it (the written `mode` is not consulted). */
export function derivedAccountMode(account: ConnectorAccountConfig): DerivedMode {
  if (isSandboxEndpoint(account.endpoint)) return { mode: 'test', because: `its endpoint (${account.endpoint}) is a sandbox` };
  switch (account.type) {
    case 'stripe':
      return STRIPE_TEST_KEY.test(account.secret_key)
        ? { mode: 'test', because: 'its secret key is a Stripe test-mode key (sk_test_/rk_test_)' }
        : { mode: 'live', because: `its endpoint (${account.endpoint}) is not a sandbox and its secret key is not a Stripe test-mode key` };
    case 'adyen':
      return adyenEnvironment(account) === 'TEST'
        ? { mode: 'test', because: 'its Adyen environment is TEST' }
        : { mode: 'live', because: `its endpoint (${account.endpoint}) is not a sandbox and its Adyen environment is LIVE` };
  }
}

export interface ModeProblem {
  readonly path: string;
  readonly message: string;
}

/** Accounts whose settings contradict each other about their mode, or contradict the `mode` written for them. */
export function accountModeProblems(config: SwitchyardConfig): ModeProblem[] {
  const problems: ModeProblem[] = [];
  for (const [name, account] of Object.entries(config.connectors)) {
    const at = (field: string): string => `connectors.${name}.${field}`;
    const sandbox = isSandboxEndpoint(account.endpoint);
    // A sandbox is a test account: a setting that says live cannot be true of it.
    if (sandbox && account.type === 'stripe' && STRIPE_LIVE_KEY.test(account.secret_key)) {
      problems.push({ path: at('secret_key'), message: `account ${name} is a sandbox (endpoint ${account.endpoint}) and so a test account, but its secret key is a Stripe live-mode key: give it a test-mode key (sk_test_/rk_test_)` });
      continue;
    }
    if (sandbox && account.type === 'adyen' && account.environment === 'LIVE') {
      problems.push({ path: at('environment'), message: `account ${name} is a sandbox (endpoint ${account.endpoint}) and so a test account, but its environment is LIVE: use TEST, or leave it out` });
      continue;
    }
    const derived = derivedAccountMode(account);
    if (account.mode !== undefined && account.mode !== derived.mode) {
      problems.push({ path: at('mode'), message: `account ${name} is a ${derived.mode} account (${derived.because}), so mode: ${account.mode} contradicts it` });
    }
  }
  return problems;
}
