// `switchyard routes validate|explain`: the config file checked, and one routing decision
// explained (rule, candidates in order, skipped with why, snapshot version).

import { newId } from '../core/ids.ts';
import { amountProblem, currency as parseCurrency, MoneyError } from '../core/money.ts';
import { formatProblems, loadConfigFile } from '../routing/config-loader.ts';
import { configWarnings } from '../routing/config-warnings.ts';
import type { RoutingSnapshot } from '../routing/snapshot.ts';
import { select } from '../routing/select.ts';
import { CliInputError } from './cli-input-error.ts';

export interface ValidateResult {
  readonly ok: boolean;
  /** The one line for stdout when ok; every problem (or, under --strict, every warning) otherwise. */
  readonly text: string;
  /** What is legal but almost surely wrong (config-warnings.ts), one line each, for stderr. */
  readonly warnings: readonly string[];
}

export function validateRoutesCommand(file: string, env: Readonly<Record<string, string | undefined>> = process.env, opts: { strict?: boolean } = {}): ValidateResult {
  const r = loadConfigFile(file, env);
  if (!r.ok) return { ok: false, text: formatProblems(r), warnings: [] };
  const s = r.snapshot;
  const warnings = configWarnings(r.config).map((w) => `${file}: warning: ${w.path}: ${w.message}`);
  if (opts.strict === true && warnings.length > 0) {
    return { ok: false, text: [...warnings, `${file}: refused under --strict: ${warnings.length} warning(s)`].join('\n'), warnings: [] };
  }
  const noted = warnings.length === 0 ? '' : `; ${warnings.length} warning(s)`;
  return { ok: true, text: `${file}: valid — routing snapshot ${s.version}, ${Object.keys(s.connectors).length} connector accounts, ${s.rules.length} rules plus default${noted}`, warnings };
}

export interface ExplainInput {
  readonly amount: string;
  readonly currency: string;
  readonly country?: string;
  readonly brand?: string;
  readonly merchant?: string;
  /** `key=value`, each once: the payment's metadata (rules may match on it). */
  readonly metadata?: readonly string[];
  readonly paymentId?: string;
  readonly testCard?: string;
  /** The key's mode: test or live (absent: a legacy key's, reaching every account). */
  readonly mode?: string;
  readonly json?: boolean;
}

export interface ExplainResult {
  /** False when the decision is a refusal (no candidate, a test card with a live candidate): the command exits 1. */
  readonly ok: boolean;
  readonly text: string;
}

function snapshotOf(file: string): RoutingSnapshot {
  const r = loadConfigFile(file);
  if (!r.ok) throw new CliInputError(formatProblems(r));
  return r.snapshot;
}

/** The amount as the API takes it: an integer of at least 1 minor unit. */
function parseAmount(text: string): number {
  if (!/^\d+$/.test(text)) throw new CliInputError(`--amount: amount "${text}" is not an integer number of minor units`);
  const amount = Number(text);
  const problem = amountProblem(amount) ?? (amount < 1 ? 'amount must be at least 1 minor unit (the API refuses 0)' : null);
  if (problem !== null) throw new CliInputError(`--amount: ${problem}`);
  return amount;
}

function parseMetadata(pairs: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new CliInputError(`--metadata "${pair}": must be key=value`);
    const key = pair.slice(0, eq);
    if (Object.hasOwn(out, key)) throw new CliInputError(`--metadata: key "${key}" given twice`);
    out[key] = pair.slice(eq + 1);
  }
  return out;
}

export function explainRouteCommand(file: string, input: ExplainInput): ExplainResult {
  const amount = parseAmount(input.amount);
  let currency: string;
  try {
    currency = parseCurrency(input.currency);
  } catch (err) {
    if (err instanceof MoneyError) throw new CliInputError(`--currency: ${err.message}`);
    throw err;
  }
  const metadata = parseMetadata(input.metadata ?? []);
  if (input.mode !== undefined && input.mode !== 'test' && input.mode !== 'live') throw new CliInputError(`--mode: "${input.mode}" is not test or live`);
  const snapshot = snapshotOf(file);
  // Weighted rules depend on the payment id: with one given, its draw is shown; without, the weights.
  const paymentId = input.paymentId ?? newId('payment');
  // Without a test card, assume the payment carries a token for every account: the question is the rules.
  const tokens = input.testCard === undefined ? Object.fromEntries(Object.keys(snapshot.connectors).map((c) => [c, 'tok'])) : undefined;
  const r = select(snapshot, {
    paymentId, amount, currency, merchantId: input.merchant ?? '', country: input.country, brand: input.brand, metadata, tokens, testCard: input.testCard, keyMode: input.mode,
  });
  const d = r.decision;
  const weights = (snapshot.rules.find((x) => x.name === d.rule) ?? snapshot.default).weighted;
  // One random draw would read as the rule's answer: without a payment id, candidates by weight, heaviest first.
  const drawn = weights === undefined || input.paymentId !== undefined;
  const candidates = drawn ? d.candidates : [...d.candidates].sort((a, b) => (weights[b] ?? 0) - (weights[a] ?? 0) || (a < b ? -1 : 1));
  if (input.json === true) {
    return {
      ok: r.ok,
      text: JSON.stringify({
        snapshot: d.snapshot, rule: d.rule, candidates, skipped: d.skipped, ...(weights === undefined ? {} : { weights }),
        ...(drawn ? { payment_id: paymentId } : {}), ...(r.ok ? {} : { refused: { code: r.code, message: r.message } }),
      }),
    };
  }
  const skipped = d.skipped.length === 0 ? 'none skipped' : `skipped ${d.skipped.map((s) => `${s.connector} (${s.reason})`).join(', ')}`;
  const refused = r.ok ? '' : `; refused: ${r.message}`;
  let order: string;
  if (weights === undefined) order = `candidates ${candidates.length === 0 ? '(none)' : candidates.join(' -> ')}`;
  else {
    const total = Object.values(weights).reduce((a, b) => a + b, 0);
    const shares = Object.entries(weights).map(([n, w]) => `${n} ${w} (${Math.round((w / total) * 1000) / 10}%)`).join(', ');
    order = drawn
      ? `weighted ${shares}; drawn for ${paymentId}: candidates ${candidates.length === 0 ? '(none)' : candidates.join(' -> ')}`
      : `weighted ${shares}: each payment tries one first by weight, then the others, heaviest first; candidates ${candidates.length === 0 ? '(none)' : candidates.join(', ')}`;
  }
  return { ok: r.ok, text: `rule ${d.rule}: ${order}; ${skipped}; snapshot ${d.snapshot}${refused}` };
}
