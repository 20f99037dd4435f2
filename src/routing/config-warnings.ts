// What `routes validate` warns on (and `--strict` refuses): a config that is legal but almost surely
// not what was meant. A rule no payment can reach (an earlier rule matches all it matches, or its
// amount range is empty), a currency none of a rule's candidates can take, a decline-table row no
// connector produces the code of. Pure: the connector facts come in as functions.

import { connectorAmountProblem } from '../connectors/registry.ts';
import { declineVocabulary } from '../connectors/decline-codes.ts';
import type { DeclineVocabulary } from '../connectors/decline-codes.ts';
import type { RouteRule, SwitchyardConfig } from './config-schema.ts';
import type { AmountCheck } from './select.ts';

export interface ConfigWarning {
  readonly path: string;
  readonly message: string;
}

export interface WarningChecks {
  readonly amountCheck: AmountCheck;
  readonly declineVocabulary: (type: string) => DeclineVocabulary | null;
}

const DEFAULT_CHECKS: WarningChecks = { amountCheck: connectorAmountProblem, declineVocabulary };

/** The API takes amounts of at least 1 minor unit. */
const MIN_AMOUNT = 1;

/** The amounts a rule's range admits, as [lo, hi] (inclusive), or null when it admits none. */
export function amountInterval(when: RouteRule['when']): { lo: number; hi: number } | null {
  const a = when.amount;
  let lo = MIN_AMOUNT;
  let hi = Number.MAX_SAFE_INTEGER;
  if (a?.gte !== undefined) lo = Math.max(lo, a.gte);
  if (a?.gt !== undefined) lo = Math.max(lo, a.gt + 1);
  if (a?.lte !== undefined) hi = Math.min(hi, a.lte);
  if (a?.lt !== undefined) hi = Math.min(hi, a.lt - 1);
  return lo <= hi ? { lo, hi } : null;
}

function describeRange(a: NonNullable<RouteRule['when']['amount']>): string {
  return (['gte', 'gt', 'lte', 'lt'] as const).filter((k) => a[k] !== undefined).map((k) => `${k} ${a[k]}`).join(', ');
}

const subset = (inner: readonly string[] | undefined, outer: readonly string[] | undefined): boolean =>
  outer === undefined || (inner !== undefined && inner.every((v) => outer.includes(v)));

/** Whether every payment `later` matches is matched by `earlier` (so `later` is never reached). */
export function covers(earlier: RouteRule['when'], later: RouteRule['when']): boolean {
  const e = amountInterval(earlier);
  const l = amountInterval(later);
  if (e === null || l === null) return false;
  if (e.lo > l.lo || e.hi < l.hi) return false;
  if (!subset(later.currency, earlier.currency) || !subset(later.country, earlier.country) || !subset(later.merchant, earlier.merchant)) return false;
  // Brands are compared lower-cased at match time (select.ts).
  if (!subset(later.brand?.map((b) => b.toLowerCase()), earlier.brand?.map((b) => b.toLowerCase()))) return false;
  return Object.entries(earlier.metadata ?? {}).every(([k, v]) => later.metadata?.[k] === v);
}

const isCatchAll = (when: RouteRule['when']): boolean => covers(when, {});

/** Probe amounts: a currency is one an account can express when it takes any of them (exponent steps divide them all). */
const PROBES = [1_000, 100_000, 10_000_000];

function candidatesOf(rule: Pick<RouteRule, 'priority' | 'weighted'>): string[] {
  return rule.priority ?? Object.keys(rule.weighted ?? {});
}

export function configWarnings(config: SwitchyardConfig, checks: WarningChecks = DEFAULT_CHECKS): ConfigWarning[] {
  const warnings: ConfigWarning[] = [];
  const rules = config.routing.rules;
  rules.forEach((rule, i) => {
    const at = `routing.rules.${i}`;
    if (rule.when.amount !== undefined && amountInterval(rule.when) === null) {
      warnings.push({ path: `${at}.when.amount`, message: `rule "${rule.name}" matches no payment: its amount range (${describeRange(rule.when.amount)}) admits no amount of at least ${MIN_AMOUNT} minor unit` });
      return;
    }
    const shadow = rules.slice(0, i).find((e) => covers(e.when, rule.when));
    if (shadow !== undefined) {
      const how = isCatchAll(shadow.when) ? 'a catch-all that matches every payment' : 'which matches every payment this one matches';
      warnings.push({ path: at, message: `rule "${rule.name}" is never reached: rule "${shadow.name}" comes first, ${how}` });
      return;
    }
    rule.when.currency?.forEach((currency, k) => {
      const why = candidatesOf(rule).map((name) => {
        const account = config.connectors[name];
        if (account === undefined) return `${name} (not configured)`;
        const problems = PROBES.map((a) => checks.amountCheck(account.type, a, currency));
        return problems.includes(null) ? null : `${name} (${problems[0]})`;
      });
      if (why.every((w) => w !== null)) {
        warnings.push({ path: `${at}.when.currency.${k}`, message: `rule "${rule.name}" matches ${currency}, but none of its candidates can take ${currency}: ${why.join(', ')}` });
      }
    });
  });
  const catchAll = rules.find((r) => isCatchAll(r.when));
  if (catchAll !== undefined) warnings.push({ path: 'routing.default', message: `the default route is never used: rule "${catchAll.name}" matches every payment` });

  const types = new Set<string>(Object.values(config.connectors).map((c) => c.type));
  for (const [type, rows] of Object.entries(config.declines)) {
    const vocabulary = checks.declineVocabulary(type);
    if (vocabulary === null) {
      warnings.push({ path: `declines.${type}`, message: `there is no connector type "${type}": these rows never apply` });
      continue;
    }
    if (!types.has(type)) {
      warnings.push({ path: `declines.${type}`, message: `no connector account is of type ${type}: these rows never apply` });
      continue;
    }
    for (const code of Object.keys(rows)) {
      if (vocabulary.produces(code)) continue;
      const meant = vocabulary.meant(code);
      warnings.push({
        path: `declines.${type}.${code}`,
        message: `no ${type} connector produces decline code "${code}", so this row never applies${meant === null ? '' : ` (the table is keyed by the gateway's codes: ${type}'s "${code}" is "${meant}")`}`,
      });
    }
  }
  return warnings;
}
