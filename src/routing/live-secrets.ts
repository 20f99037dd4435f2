// An account that reaches a real provider must have secrets of its own. The sandbox defaults in
// config/switchyard.yaml are printed in the repository, so a live account left on one (a variable
// forgotten, or set empty: an empty variable counts as unset and its default applies) would accept
// webhooks anyone can sign. Only accounts isSandboxEndpoint() calls sandboxes may use them; for the
// others every secret that is empty or one of the public values is a config problem naming the
// ${VAR} it was read from, so `routes validate`, start and hot reload all refuse it. A live Adyen
// account must also name its report credential (report downloads do not take the payments key).

import type { SwitchyardConfig, ConnectorAccountConfig } from './config-schema.ts';
import type { VariableSources } from './interpolate.ts';
import { isSandboxEndpoint } from './snapshot.ts';

/** Every secret value the repository prints (config/switchyard.yaml defaults, docs, tests). */
export const PUBLIC_SANDBOX_SECRETS: ReadonlySet<string> = new Set([
  'sk_test_sandbox',
  'whsec_sandbox',
  '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056',
  'sandbox',
  'sandbox_report',
]);

export interface SecretProblem {
  readonly path: string;
  readonly message: string;
}

interface SecretField {
  readonly path: string;
  readonly what: string;
  readonly value: string;
}

function secretFields(name: string, account: ConnectorAccountConfig): SecretField[] {
  const at = (...p: (string | number)[]): string => ['connectors', name, ...p].join('.');
  switch (account.type) {
    case 'stripe':
      return [
        { path: at('secret_key'), what: 'Stripe secret key', value: account.secret_key },
        ...account.webhook_secrets.map((v, i) => ({ path: at('webhook_secrets', i), what: 'Stripe webhook signing secret', value: v })),
      ];
    case 'adyen':
      return [
        { path: at('api_key'), what: 'Adyen API key', value: account.api_key },
        ...account.hmac_keys.map((v, i) => ({ path: at('hmac_keys', i), what: 'Adyen webhook HMAC key', value: v })),
        { path: at('basic_auth', 'password'), what: 'Adyen webhook basic-auth password', value: account.basic_auth.password },
        ...(account.report_api_key === undefined ? [] : [{ path: at('report_api_key'), what: 'Adyen report user API key', value: account.report_api_key }]),
        ...(account.report_basic_auth === undefined ? [] : [{ path: at('report_basic_auth', 'password'), what: 'Adyen report user password', value: account.report_basic_auth.password }]),
      ];
  }
}

/** Public whatever its case: HMAC keys are hex, and a value differing only in case is the same key. */
function isPublic(value: string): boolean {
  const v = value.trim();
  return v === '' || [...PUBLIC_SANDBOX_SECRETS].some((s) => s.toUpperCase() === v.toUpperCase());
}

function whyPublic(field: SecretField, sources: VariableSources): string {
  const uses = sources.get(field.path) ?? [];
  const fromDefault = uses.filter((u) => u.defaulted).map((u) => u.name);
  const fromEnv = uses.filter((u) => !u.defaulted).map((u) => u.name);
  if (fromDefault.length > 0) return `${fromDefault.join(', ')} is unset or empty, so the sandbox default applies: set ${fromDefault.join(', ')} to the account's own ${field.what}`;
  if (fromEnv.length > 0) return `${fromEnv.join(', ')} holds a public sandbox value: set ${fromEnv.join(', ')} to the account's own ${field.what}`;
  if (field.value.trim() === '') return `the ${field.what} is empty: read it from the environment as \${VAR}`;
  return `the ${field.what} is a public sandbox value written in the file: read the account's own from the environment as \${VAR}`;
}

/** Problems with the secrets of accounts that are not sandboxes (none for a sandbox-only config). */
export function liveSecretProblems(config: SwitchyardConfig, sources: VariableSources): SecretProblem[] {
  const problems: SecretProblem[] = [];
  for (const [name, account] of Object.entries(config.connectors)) {
    if (isSandboxEndpoint(account.endpoint)) continue;
    if (account.type === 'adyen' && account.report_api_key === undefined && account.report_basic_auth === undefined) {
      // Live Adyen serves reports only to a user with the Merchant Report Download role; the payments key gets 401/403.
      problems.push({
        path: `connectors.${name}.report_api_key`,
        message: `account ${name} is not a sandbox (endpoint ${account.endpoint}) and has no report credential: set report_api_key, or report_basic_auth {username, password}, to a report service user with the Merchant Report Download role (read from the environment as \${VAR})`,
      });
    }
    for (const field of secretFields(name, account)) {
      if (!isPublic(field.value)) continue;
      problems.push({ path: field.path, message: `account ${name} is not a sandbox (endpoint ${account.endpoint}), and ${whyPublic(field, sources)}` });
    }
  }
  return problems;
}

/** The variables a value was read from, for a schema problem on it (an empty variable is otherwise invisible there). */
export function variableNote(path: string, sources: VariableSources): string {
  const uses = sources.get(path);
  if (uses === undefined) return '';
  return ` (read from ${uses.map((u) => `\${${u.name}}${u.defaulted ? ', unset or empty' : ''}`).join('; ')})`;
}
